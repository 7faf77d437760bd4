// Where things live in the memory shared by the nodes of a ring-based fabric (`inproc` uses
// heap memory, `shm` a shared segment): one doorbell per node and one byte ring for every
// ordered pair of nodes, each ring starting on its own cache line.
#pragma once

#include <cstddef>
#include <cstdint>

#include "comm/byte_ring.hpp"
#include "comm/doorbell.hpp"

namespace iso::comm {

struct fabric_layout {
  std::uint32_t nodes = 0;
  std::size_t ring_capacity = 0;  // record space of each ring, a power of two

  [[nodiscard]] std::size_t ring_stride() const {
    return (byte_ring_footprint(ring_capacity) + 63) & ~std::size_t{63};
  }
  [[nodiscard]] std::size_t doorbell_offset(std::uint32_t node) const {
    return node * sizeof(doorbell);
  }
  [[nodiscard]] std::size_t ring_offset(std::uint32_t from, std::uint32_t to) const {
    return nodes * sizeof(doorbell) + (std::size_t{from} * nodes + to) * ring_stride();
  }
  [[nodiscard]] std::size_t bytes() const {
    return nodes * sizeof(doorbell) + std::size_t{nodes} * nodes * ring_stride();
  }
};

}  // namespace iso::comm
