// Where fetch-and-add counters live when their holder has a memory window (processes or
// threads of one host): the last kCounterAreaBytes of the holder's window hold the values
// of counters 0..kCounterSlots-1 as 64-bit atomics, so that a caller on the same host adds
// with one CPU atomic (the goal: close to shmem_atomic_fetch_add) while the holder's NIC
// answers callers elsewhere with an atomic on the same word. Both paths add to one
// location, so together they still hand out every value exactly once. Counters with higher
// indexes, and every counter of a job without windows, stay in the NIC's memory and go
// through the NIC only.
//
//   const window_split w = split_window(memory);
//   smm_options.window = w.copies;                 // the SMM's part, at the front
//   std::uint64_t before = w.counters[7].fetch_add(1, std::memory_order_acq_rel);
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

namespace iso::runtime {

inline constexpr std::size_t kCounterSlots = 512;
inline constexpr std::size_t kCounterAreaBytes = kCounterSlots * sizeof(std::uint64_t);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "counters are shared between processes: they must be lock-free");

struct window_split {
  std::span<std::byte> copies;                     // the front: the SMM's copies
  std::span<std::atomic<std::uint64_t>> counters;  // the back; empty: no counters
};

// Splits a node's window (zero-filled, 8-byte aligned at its end). A window too small for
// the area keeps it all for the copies and has no counters; an empty one stays empty.
[[nodiscard]] window_split split_window(std::span<std::byte> memory);

}  // namespace iso::runtime
