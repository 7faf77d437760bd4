// The isotach receive queue (Ironman's iso_receive): isotach messages, coalesced signals
// and barrier completions, filed as the pulses that carry them execute, so every node sees
// them in one logical-time order.
//
// Executing a pulse (or a purely local isochron) is one batch:
//   q.begin_batch(pulse);  q.message(...); q.signal(...); q.arrival(...);  q.end_batch();
// Signals on one channel within a batch coalesce into one notice at its end. A barrier
// completes in the batch that holds its last arrival: a strong barrier's notice goes after
// the batch's messages, a weak one's before them.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "iso/notice.hpp"
#include "runtime/smm/byte_buffer.hpp"

namespace iso::runtime {

class receive_queue {
 public:
  explicit receive_queue(std::uint32_t nodes);

  // The next instance this node may start on `channel`. FailedPrecondition while its
  // previous instance has not completed here; InvalidArgument for a bad channel.
  [[nodiscard]] absl::StatusOr<std::uint64_t> next_barrier(channel_id channel) const;
  // Records that this node started `instance` (after next_barrier() allowed it).
  void started_barrier(channel_id channel) { ++started_[channel]; }
  [[nodiscard]] bool barrier_complete(channel_id channel) const {
    return completed_[channel] == started_[channel];
  }

  void begin_batch(std::uint64_t pulse);
  void message(std::uint32_t source, std::span<const std::byte> payload);
  [[nodiscard]] absl::Status signal(std::uint32_t source, channel_id channel);
  // InvalidArgument when the arrival contradicts the others (another mode, another
  // instance, a second arrival from one node, a bad channel): the peer is broken.
  [[nodiscard]] absl::Status arrival(std::uint32_t source, channel_id channel, barrier_mode mode,
                                     std::uint64_t instance);
  void end_batch();

  [[nodiscard]] bool empty() const { return queue_.empty(); }
  [[nodiscard]] std::size_t size() const { return queue_.size(); }
  [[nodiscard]] std::size_t payload_bytes() const { return payload_bytes_; }
  // The size of the oldest notice's payload (the queue must not be empty).
  [[nodiscard]] std::size_t front_payload_size() const {
    return queue_.front().what == notice::kind::message ? payloads_.front().size() : 0;
  }
  // Removes and returns the oldest notice (the queue must not be empty).
  notice pop();

 private:
  struct barrier_state {
    std::uint32_t arrived = 0;
    std::vector<bool> from;
    barrier_mode mode = barrier_mode::strong;
  };

  std::uint32_t nodes_;
  // Message notices get their bytes when popped: a pulse queues a burst of messages, and
  // allocating each one's vector then (to be freed one at a time as the application takes
  // them) defeated the allocator's per-thread cache. The payloads wait in pooled buffers,
  // in the order of the message notices.
  std::deque<notice> queue_;
  std::deque<byte_buffer> payloads_;
  std::vector<byte_buffer> spare_payloads_;
  std::size_t payload_bytes_ = 0;
  std::uint64_t pulse_ = 0;
  std::size_t batch_start_ = 0;
  std::array<std::uint32_t, kChannels> signals_{};  // this batch's, per channel
  bool signaled_ = false;                           // this batch has signals
  std::array<barrier_state, kChannels> barriers_{};
  std::array<std::uint64_t, kChannels> started_{};
  std::array<std::uint64_t, kChannels> completed_{};
  std::vector<notice> completions_;  // this batch's
};

}  // namespace iso::runtime
