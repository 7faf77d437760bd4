// Pulse buckets: what the NIC delivered for each pulse that has not yet executed (remote
// parts of other nodes' isochrons, and this node's isochron markers), filed in arrival
// order, which is rank order per sender.
//
// A pulse executes once per EOP, and on a busy node that is every few microseconds, so
// the buckets reuse their storage: item lists and payload buffers go back to a pool once
// the pulse has run, and a steady stream of small isochrons allocates nothing.
//
//   buckets.add(pulse, /*source=*/3, /*sequence=*/7, payload);
//   std::vector<bucket_item> items = buckets.take(pulse);  ... run them ...
//   buckets.recycle(std::move(items));
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "runtime/smm/byte_buffer.hpp"

namespace iso::runtime {

struct bucket_item {
  std::uint32_t source = 0;
  bool own_marker = false;      // this node's isochron marker: its local parts run here
  std::uint32_t sequence = 0;   // the issuer's isochron number (a marker's first)
  std::uint32_t isochrons = 1;  // a marker: how many of this node's isochrons it covers
  byte_buffer ops;              // the remote part's operations (empty for a marker)
};

class pulse_buckets {
 public:
  // Files a copy of `ops`, the remote part of isochron `sequence` of node `source`, under
  // `pulse`.
  void add(std::uint64_t pulse, std::uint32_t source, std::uint32_t sequence,
           std::span<const std::byte> ops);
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

  std::vector<bucket> buckets_;  // ascending pulse order; a handful at a time
  std::vector<std::vector<bucket_item>> spare_lists_;
  std::vector<byte_buffer> spare_buffers_;
};

}  // namespace iso::runtime
