#include "comm/ring_transport.hpp"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_format.h"
#include "base/check.hpp"

namespace iso::comm {

ring_transport::ring_transport(node_id self, const fabric_layout& layout, std::byte* base,
                               std::shared_ptr<void> keep_alive, ring_transport_options options)
    : transport(self, layout.nodes),
      layout_(layout),
      base_(base),
      keep_alive_(std::move(keep_alive)),
      options_(options),
      max_packet_(byte_ring_max_payload(layout.ring_capacity)),
      shuffle_rng_(self + 1) {
  ISO_CHECK(self < layout.nodes) << "node " << self << " of " << layout.nodes;
  outbound_.reserve(layout.nodes);
  inbound_.reserve(layout.nodes);
  for (node_id peer = 0; peer < layout.nodes; ++peer) {
    outbound_.emplace_back(base + layout.ring_offset(self, peer), layout.ring_capacity);
    inbound_.emplace_back(
        ring_consumer(base + layout.ring_offset(peer, self), layout.ring_capacity));
    doorbells_.push_back(reinterpret_cast<doorbell*>(base + layout.doorbell_offset(peer)));
  }
  is_wake_due_.assign(layout.nodes, false);
  shuffled_.resize(layout.nodes);
  std::iota(shuffled_.begin(), shuffled_.end(), 0);
}

absl::Status ring_transport::send(node_id destination, std::span<const byte_span> pieces) {
  if (destination >= size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("send to node %u: the job has nodes 0..%u", destination, size() - 1));
  }
  std::size_t total = 0;
  for (const byte_span& piece : pieces) total += piece.size();
  if (total > max_packet_) {
    return absl::OutOfRangeError(
        absl::StrFormat("packet of %u bytes to node %u exceeds the maximum of %u", total,
                        destination, max_packet_));
  }
  if (!outbound_[destination].try_push(pieces, total)) {
    ++counters_.sends_would_block;
    // A prebuilt status: back-pressure is an ordinary event and must not allocate.
    static const absl::Status full = absl::UnavailableError("ring to destination is full");
    return full;
  }
  ++counters_.packets_sent;
  counters_.bytes_sent += total;
  if (!deferring_) {
    doorbells_[destination]->ring();
  } else if (!is_wake_due_[destination]) {
    is_wake_due_[destination] = true;
    wake_due_.push_back(destination);
  }
  return absl::OkStatus();
}

void ring_transport::wake_deferred() {
  deferring_ = false;
  for (node_id destination : wake_due_) {
    doorbells_[destination]->ring();
    is_wake_due_[destination] = false;
  }
  wake_due_.clear();
}

absl::Status ring_transport::drain(node_id source, packet_upcall upcall, std::size_t& handled,
                                   std::size_t budget) {
  inbound& in = inbound_[source];
  ring_record record;
  while (handled < budget) {
    switch (in.ring.peek(record)) {
      case ring_consumer::peek_result::empty:
        return absl::OkStatus();
      case ring_consumer::peek_result::corrupt:
        return absl::DataLossError(absl::StrFormat("corrupt ring from node %u at position %u",
                                                   source, in.ring.read_position()));
      case ring_consumer::peek_result::record:
        break;
    }
    in.ring.advance(record);
    ++counters_.packets_received;
    counters_.bytes_received += record.payload.size();
    received_packet packet = make_received(source, record.payload, record.end);
    upcall(packet);
    ++handled;
    in.release.handled(in.ring, record.end, packet.held());
  }
  return absl::OkStatus();
}

absl::Status ring_transport::poll(packet_upcall upcall, std::size_t& handled, std::size_t budget) {
  handled = 0;
  const std::uint32_t n = size();
  if (options_.shuffle_poll_order) {
    std::shuffle(shuffled_.begin(), shuffled_.end(), shuffle_rng_);
    for (node_id source : shuffled_) {
      if (absl::Status s = drain(source, upcall, handled, budget); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  for (std::uint32_t i = 0; i < n; ++i) {
    node_id source = next_source_ + i;
    if (source >= n) source -= n;
    if (absl::Status s = drain(source, upcall, handled, budget); !s.ok()) return s;
  }
  next_source_ = next_source_ + 1 == n ? 0 : next_source_ + 1;
  return absl::OkStatus();
}

void ring_transport::release_held(node_id source, std::uint64_t token) {
  inbound& in = inbound_[source];
  ISO_CHECK(in.release.release(in.ring, token))
      << "release of a packet from node " << source << " that is not held";
}

bool ring_transport::anything_pending() const {
  return std::any_of(inbound_.begin(), inbound_.end(),
                     [](const inbound& in) { return in.ring.has_pending(); });
}

void ring_transport::wait(absl::Duration timeout, absl::FunctionRef<bool()> also_ready) {
  doorbell& bell = *doorbells_[self()];
  const std::uint32_t ticket = bell.prepare_sleep();
  if (!anything_pending() && !also_ready()) bell.sleep(ticket, timeout);
  bell.finish_sleep();
}

void ring_transport::announce_idle(bool idle) {
  doorbells_[self()]->idle.store(idle ? 1 : 0, std::memory_order_relaxed);
}

std::optional<std::uint32_t> ring_transport::busy_neighbours(std::uint32_t enough) const {
  std::uint32_t busy = 0;
  for (node_id peer = 0; peer < size() && busy < enough; ++peer) {
    busy += peer != self() && doorbells_[peer]->idle.load(std::memory_order_relaxed) == 0;
  }
  return busy;
}

void ring_transport::wake() {
  doorbell& bell = *doorbells_[self()];
  bell.sequence.fetch_add(1, std::memory_order_release);
  bell.ring();
}

}  // namespace iso::comm
