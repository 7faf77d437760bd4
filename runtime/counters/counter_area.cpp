#include "runtime/counters/counter_area.hpp"

namespace iso::runtime {

window_split split_window(std::span<std::byte> memory) {
  // Below this the copies would lose most of their room to the counters.
  constexpr std::size_t kSmallest = 4 * kCounterAreaBytes;
  if (memory.size() < kSmallest) return {.copies = memory, .counters = {}};
  // The end, rounded down to 64 bytes of address: cache lines of its own, aligned. Every
  // process maps a window at the same alignment (pages), so all find the area alike.
  const auto base = reinterpret_cast<std::uintptr_t>(memory.data());  // NOLINT
  const std::uintptr_t end = (base + memory.size()) & ~std::uintptr_t{63};
  const std::size_t at = end - base - kCounterAreaBytes;
  // The memory is zero-filled and lives as long as the job: zero is each counter's start.
  auto* slots = reinterpret_cast<std::atomic<std::uint64_t>*>(memory.data() + at);  // NOLINT
  return {.copies = memory.first(at), .counters = {slots, kCounterSlots}};
}

}  // namespace iso::runtime
