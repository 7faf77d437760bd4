#include "runtime/smm/receive_queue.hpp"

#include <utility>

#include "absl/strings/str_format.h"

namespace iso::runtime {
namespace {

absl::Status check_channel(channel_id channel) {
  if (channel < kChannels) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrFormat("channel %u does not exist: channels are 0..%u", channel, kChannels - 1));
}

const char* mode_name(barrier_mode mode) { return mode == barrier_mode::weak ? "weak" : "strong"; }

}  // namespace

receive_queue::receive_queue(std::uint32_t nodes) : nodes_(nodes) {
  for (barrier_state& b : barriers_) b.from.assign(nodes, false);
}

absl::StatusOr<std::uint64_t> receive_queue::next_barrier(channel_id channel) const {
  if (absl::Status s = check_channel(channel); !s.ok()) return s;
  if (!barrier_complete(channel)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "barrier %u on channel %u has not completed here yet; wait for its notice before "
        "starting the next",
        started_[channel] - 1, channel));
  }
  return started_[channel];
}

void receive_queue::begin_batch(std::uint64_t pulse) {
  pulse_ = pulse;
  batch_start_ = queue_.size();
}

void receive_queue::message(std::uint32_t source, std::span<const std::byte> payload) {
  notice n;
  n.what = notice::kind::message;
  n.pulse = pulse_;
  n.source = source;
  byte_buffer& bytes = payloads_.emplace_back();
  if (!spare_payloads_.empty()) {
    bytes = std::move(spare_payloads_.back());
    spare_payloads_.pop_back();
  }
  bytes.append(payload.data(), payload.size());
  payload_bytes_ += payload.size();
  queue_.push_back(std::move(n));
}

absl::Status receive_queue::signal(std::uint32_t source, channel_id channel) {
  if (absl::Status s = check_channel(channel); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("signal from node %u: %s", source, s.message()));
  }
  ++signals_[channel];
  signaled_ = true;
  return absl::OkStatus();
}

absl::Status receive_queue::arrival(std::uint32_t source, channel_id channel, barrier_mode mode,
                                    std::uint64_t instance) {
  if (absl::Status s = check_channel(channel); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("barrier arrival from node %u: %s", source, s.message()));
  }
  if (mode != barrier_mode::weak && mode != barrier_mode::strong) {
    return absl::InvalidArgumentError(
        absl::StrFormat("barrier arrival from node %u names mode %u, which does not exist", source,
                        static_cast<unsigned>(mode)));
  }
  barrier_state& b = barriers_[channel];
  if (instance != completed_[channel]) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "node %u arrived at barrier %u on channel %u while barrier %u is in progress", source,
        instance, channel, completed_[channel]));
  }
  if (b.from[source]) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "node %u arrived twice at barrier %u on channel %u", source, instance, channel));
  }
  if (b.arrived != 0 && b.mode != mode) {
    return absl::InvalidArgumentError(
        absl::StrFormat("barrier %u on channel %u: node %u arrived %s, others %s", instance,
                        channel, source, mode_name(mode), mode_name(b.mode)));
  }
  b.mode = mode;
  b.from[source] = true;
  if (++b.arrived < nodes_) return absl::OkStatus();
  notice n;
  n.what = notice::kind::barrier;
  n.pulse = pulse_;
  n.channel = channel;
  n.instance = instance;
  n.mode = mode;
  completions_.push_back(std::move(n));
  b.arrived = 0;
  b.from.assign(nodes_, false);
  ++completed_[channel];
  return absl::OkStatus();
}

void receive_queue::end_batch() {
  if (completions_.empty() && !signaled_) {  // the usual batch: messages only
    batch_start_ = queue_.size();
    return;
  }
  signaled_ = false;
  // Weak completions go before the batch's messages, in channel order; strong ones and the
  // coalesced signals after them.
  std::size_t at = batch_start_;
  for (notice& n : completions_) {
    if (n.mode != barrier_mode::weak) continue;
    queue_.insert(queue_.begin() + static_cast<std::ptrdiff_t>(at++), std::move(n));
  }
  for (channel_id c = 0; c < kChannels; ++c) {
    if (signals_[c] == 0) continue;
    notice n;
    n.what = notice::kind::signal;
    n.pulse = pulse_;
    n.channel = c;
    n.count = signals_[c];
    queue_.push_back(std::move(n));
    signals_[c] = 0;
  }
  for (notice& n : completions_) {
    if (n.mode == barrier_mode::strong) queue_.push_back(std::move(n));
  }
  completions_.clear();
  batch_start_ = queue_.size();
}

notice receive_queue::pop() {
  // The pool's bounds: a pulse's burst of small messages, and no buffer that would keep a
  // large message's memory.
  constexpr std::size_t kSparePayloads = 256;
  constexpr std::size_t kLargestSparePayload = std::size_t{64} << 10;
  notice& front = queue_.front();
  if (front.what == notice::kind::message) {
    // Copied before anything is removed: if the allocation throws, nothing is lost.
    byte_buffer& bytes = payloads_.front();
    front.bytes.assign(bytes.bytes().begin(), bytes.bytes().end());
    payload_bytes_ -= bytes.size();
    if (spare_payloads_.size() < kSparePayloads && bytes.capacity() <= kLargestSparePayload) {
      bytes.clear();
      spare_payloads_.push_back(std::move(bytes));
    }
    payloads_.pop_front();
  }
  notice n = std::move(front);
  queue_.pop_front();
  return n;
}

}  // namespace iso::runtime
