// The memory window's sequence lock: a reader's snapshot is either consistent (every
// variable from one state the stand describes) or reported as changing, never torn, while
// the owner rewrites the variables on another thread.
#include "runtime/smm/copy_window.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace {

using iso::runtime::copy_window;
using iso::runtime::shared_variable;
using iso::runtime::window_reader;
using iso::runtime::window_stand;

constexpr std::uint32_t kPageVariables = 64;

TEST(CopyWindow, PagesThatFitLiveInTheWindowAfterItsHeader) {
  std::vector<std::byte> memory(64 + 3 * kPageVariables * sizeof(shared_variable) + 100);
  copy_window window(memory, kPageVariables);
  EXPECT_EQ(window.capacity(), 3u);
  EXPECT_EQ(reinterpret_cast<std::byte*>(window.page(1)),
            memory.data() + 64 + kPageVariables * sizeof(shared_variable));
  const copy_window none({}, kPageVariables);
  EXPECT_EQ(none.capacity(), 0u);
  EXPECT_FALSE(window_reader({}, kPageVariables).present());
}

TEST(CopyWindow, ASnapshotIsNeverTornWhileTheOwnerChangesTheVariables) {
  std::vector<std::byte> memory(64 + kPageVariables * sizeof(shared_variable));
  copy_window window(memory, kPageVariables);
  const window_reader reader(memory, kPageVariables);
  ASSERT_TRUE(reader.present());
  constexpr std::uint64_t kRounds = 20000;
  std::atomic<bool> stop{false};
  std::thread owner([&] {
    shared_variable* vars = window.page(0);
    for (std::uint64_t round = 1; round <= kRounds && !stop; ++round) {
      window.begin_change();
      for (std::uint32_t i = 0; i < kPageVariables; ++i) iso::runtime::store_value(vars[i], round);
      window.publish_through(round);
      window.end_change();
    }
  });
  int consistent = 0;
  int torn = 0;
  std::uint64_t last_through = 0;
  bool went_back = false;
  std::vector<std::uint64_t> seen(kPageVariables);
  // Bounded by time, not by attempts: on a loaded machine the owner can be preempted inside
  // a change for a whole time slice, and every attempt meanwhile sees it changing. Once the
  // owner is done, every snapshot is consistent.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (consistent < 2000 && std::chrono::steady_clock::now() < deadline) {
    window_stand stand_seen;
    const window_reader::outcome got = reader.snapshot([&](const window_stand& stand) {
      stand_seen = stand;
      for (std::uint32_t i = 0; i < kPageVariables; ++i) {
        seen[i] = window_reader::load(reader.page(0)[i]).value;
      }
      return true;
    });
    if (got != window_reader::outcome::consistent) continue;
    ++consistent;
    for (std::uint64_t v : seen) torn += v != stand_seen.through ? 1 : 0;
    went_back |= stand_seen.through < last_through;
    last_through = stand_seen.through;
  }
  stop = true;
  owner.join();
  EXPECT_GT(consistent, 0);
  EXPECT_EQ(torn, 0) << "a consistent snapshot mixed values of two changes";
  EXPECT_FALSE(went_back);
}

TEST(CopyWindow, AReaderThatDeclinesSaysSo) {
  std::vector<std::byte> memory(64 + kPageVariables * sizeof(shared_variable));
  copy_window window(memory, kPageVariables);
  const window_reader reader(memory, kPageVariables);
  EXPECT_EQ(reader.snapshot([](const window_stand&) { return false; }),
            window_reader::outcome::declined);
  window.begin_change();
  EXPECT_EQ(reader.snapshot([](const window_stand&) { return true; }),
            window_reader::outcome::changing);
  window.end_change();
  EXPECT_EQ(reader.snapshot([](const window_stand&) { return true; }),
            window_reader::outcome::consistent);
}

}  // namespace
