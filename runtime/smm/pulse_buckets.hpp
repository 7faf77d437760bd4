// Pulse buckets: what the NIC delivered for each pulse that has not yet executed (remote
// parts of other nodes' isochrons, and this node's isochron markers), filed in arrival
// order, which is rank order per sender.
//
// A remote part is filed in place, in its host-queue record, which the owner holds: most
// pulses run in the round of progress that delivered them, and then nothing is copied.
// What is still waiting when the round ends is copied out (unhold) and its record given
// back, so the NIC can reuse the queue. A pulse executes once per EOP, and on a busy node
// that is every few microseconds, so item lists and payload buffers go back to a pool once
// the pulse has run, and a steady stream of small isochrons allocates nothing.
//
//   buckets.add_held(pulse, /*source=*/3, /*sequence=*/7, payload, record);
//   std::vector<bucket_item> items = buckets.take(pulse);  ... run them, release held ...
//   buckets.recycle(std::move(items));
//   buckets.unhold([&](const bucket_item& item) { release(item.record); });  // round ends
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "absl/functional/function_ref.h"
#include "runtime/smm/byte_buffer.hpp"

namespace iso::runtime {

struct bucket_item {
  std::uint32_t source = 0;
  bool own_marker = false;      // this node's isochron marker: its local parts run here
  std::uint32_t sequence = 0;   // the issuer's isochron number (a marker's first)
  std::uint32_t isochrons = 1;  // a marker: how many of this node's isochrons it covers
  byte_buffer ops;              // the remote part's operations (empty for a marker)
  // Or, while `held`, the operations where they arrived: in the host queue's record
  // `record`, which the owner releases when the pulse has run or copies into `ops`.
  bool held = false;
  std::span<const std::byte> held_ops{};
  std::uint64_t record = 0;
  // Relaxed mode: its plain writes were applied on arrival (the pulse applies them again).
  bool writes_applied = false;

  [[nodiscard]] std::span<const std::byte> operations() const {
    return held ? held_ops : ops.bytes();
  }
};

class pulse_buckets {
 public:
  // Files `ops`, the remote part of isochron `sequence` of node `source`, under `pulse`, in
  // place: they stay in the host queue's record `record`, held by the caller until the
  // pulse has run or unhold() copies them out. `writes_applied`: relaxed mode applied its
  // plain writes on arrival.
  void add_held(std::uint64_t pulse, std::uint32_t source, std::uint32_t sequence,
                std::span<const std::byte> ops, std::uint64_t record, bool writes_applied = false);
  // Copies the operations of every held item of a waiting pulse into the item's own buffer,
  // then calls `released` for it (the caller gives its record back). Every round ends with
  // it, and most hold nothing: that case costs one comparison.
  void unhold(absl::FunctionRef<void(const bucket_item&)> released) {
    if (held_ != 0) unhold_all(released);
  }
  // Files this node's (`self`) marker of isochrons `sequence` to `sequence + isochrons - 1`
  // under `pulse`.
  void add_marker(std::uint64_t pulse, std::uint32_t self, std::uint32_t sequence,
                  std::uint32_t isochrons);
  // Removes and returns `pulse`'s items (none if nothing was filed under it).
  [[nodiscard]] std::vector<bucket_item> take(std::uint64_t pulse);
  // Gives back a list take() returned, for reuse.
  void recycle(std::vector<bucket_item> items);
  // Pulses with items waiting.
  [[nodiscard]] std::size_t size() const { return buckets_.size(); }

 private:
  struct bucket {
    std::uint64_t pulse;
    std::vector<bucket_item> items;
  };

  bucket_item& file(std::uint64_t pulse);
  void unhold_all(absl::FunctionRef<void(const bucket_item&)> released);

  std::vector<bucket> buckets_;  // ascending pulse order; a handful at a time
  std::vector<std::vector<bucket_item>> spare_lists_;
  std::vector<byte_buffer> spare_buffers_;
  std::size_t held_ = 0;  // items filed in place and still in buckets_
};

}  // namespace iso::runtime
