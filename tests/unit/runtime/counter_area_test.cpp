// Where a window's counters lie: at the end, 64-byte aligned, after the copies, the same for
// every mapping of the window; a small window keeps everything for its copies.
#include "runtime/counters/counter_area.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace iso::runtime {
namespace {

TEST(CounterArea, TheCountersTakeTheAlignedEndAndTheCopiesTheRest) {
  alignas(64) static std::byte memory[1 << 16];
  for (const std::size_t size : {std::size_t{1} << 16, (std::size_t{1} << 16) - 40}) {
    const window_split w = split_window(std::span(memory, size));
    ASSERT_EQ(w.counters.size(), kCounterSlots) << size;
    const auto first = reinterpret_cast<std::uintptr_t>(w.counters.data());
    EXPECT_EQ(first % 64, 0u) << size;
    EXPECT_EQ(reinterpret_cast<std::byte*>(w.counters.data()), w.copies.data() + w.copies.size());
    EXPECT_LE(w.copies.size() + kCounterAreaBytes, size);
    EXPECT_GT(w.copies.size() + kCounterAreaBytes + 64, size) << "more than a line left over";
  }
}

TEST(CounterArea, ASmallOrEmptyWindowHasNoCounters) {
  std::vector<std::byte> small(4 * kCounterAreaBytes - 1);
  const window_split w = split_window(small);
  EXPECT_TRUE(w.counters.empty());
  EXPECT_EQ(w.copies.size(), small.size());
  EXPECT_TRUE(split_window({}).counters.empty());
}

}  // namespace
}  // namespace iso::runtime
