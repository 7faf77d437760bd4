// The memory window's sequence lock: a reader's snapshot is either consistent (every
// variable from one state the stand describes) or reported as changing, never torn, while
// the owner rewrites the variables on another thread. A reader waiting for the owner to
// move on is woken when it does.
#include "runtime/smm/copy_window.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "tests/support/window_memory.hpp"

namespace {

using iso::runtime::copy_window;
using iso::runtime::shared_variable;
using iso::runtime::window_header;
using iso::runtime::window_reader;
using iso::runtime::window_stand;
using iso::test::window_memory;

constexpr std::uint32_t kPageVariables = 64;
constexpr std::size_t kHeader = sizeof(window_header);

TEST(CopyWindow, PagesThatFitLiveInTheWindowAfterItsHeader) {
  const window_memory memory(kHeader + 3 * kPageVariables * sizeof(shared_variable) + 100);
  copy_window window(memory.span(), kPageVariables);
  EXPECT_EQ(window.capacity(), 3u);
  EXPECT_EQ(reinterpret_cast<std::byte*>(window.page(1)),
            memory.data() + kHeader + kPageVariables * sizeof(shared_variable));
  const copy_window none({}, kPageVariables);
  EXPECT_EQ(none.capacity(), 0u);
  EXPECT_FALSE(window_reader({}, kPageVariables).present());
}

// A reader that raised the step inside a consistent snapshot may place its read up to that
// step: the owner's next change must sit there or later, however the two threads race.
TEST(CopyWindow, AChangeAfterAReaderRaisedTheStepSitsAtThatStepOrLater) {
  const window_memory memory(kHeader + kPageVariables * sizeof(shared_variable));
  copy_window window(memory.span(), kPageVariables);
  const window_reader reader(memory.span(), kPageVariables);
  // Both sides go on until each has done its share, so that they overlap however the two
  // threads are scheduled.
  constexpr std::uint64_t kLeastRounds = 20000;
  constexpr std::size_t kLeastClaims = 20000;
  std::vector<std::uint64_t> step_of{0};  // the step of the change storing round r
  step_of.reserve(4 * kLeastRounds);
  std::atomic<std::uint64_t> rounds_done{0};
  std::atomic<bool> stop{false};
  std::thread owner([&] {
    for (std::uint64_t round = 1; !stop.load(); ++round) {
      window.begin_change();
      step_of.push_back(window.change_step(0));
      iso::runtime::store_value(window.page(0)[0], round);
      window.end_change();
      rounds_done = round;
    }
  });
  // (value seen, step raised to), from consistent snapshots only; the first million kept.
  constexpr std::size_t kMostClaims = 1000000;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> claims;
  while (claims.size() < kLeastClaims || rounds_done.load() < kLeastRounds) {
    std::uint64_t value = 0;
    std::uint64_t raised = 0;
    const window_reader::outcome got = reader.snapshot([&](const window_stand& stand) {
      value = window_reader::load(reader.page(0)[0]).value;
      raised = stand.step + 1 + value % 3;
      reader.raise_step(raised);
      return true;
    });
    if (got == window_reader::outcome::consistent && claims.size() < kMostClaims) {
      claims.emplace_back(value, raised);
    }
  }
  stop = true;
  owner.join();
  const std::uint64_t rounds = rounds_done.load();
  int early = 0;
  for (const auto& [value, raised] : claims) {
    if (value < rounds && step_of[value + 1] < raised) ++early;
  }
  EXPECT_EQ(early, 0) << "changes that sat before a step a reader had raised after seeing "
                         "the state they replaced";
  // Steps only go up: a change sits at the window's step or later, and the owner's own
  // request raises the window's step too.
  window.begin_change();
  const std::uint64_t base = window.change_step(0);
  EXPECT_GE(base, step_of[rounds]);
  EXPECT_EQ(window.change_step(base + 10), base + 10);
  window.end_change();
  EXPECT_EQ(reader.snapshot([&](const window_stand& stand) { return stand.step == base + 10; }),
            window_reader::outcome::consistent);
}

TEST(CopyWindow, ASnapshotIsNeverTornWhileTheOwnerChangesTheVariables) {
  const window_memory memory(kHeader + kPageVariables * sizeof(shared_variable));
  copy_window window(memory.span(), kPageVariables);
  const window_reader reader(memory.span(), kPageVariables);
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
  const window_memory memory(kHeader + kPageVariables * sizeof(shared_variable));
  copy_window window(memory.span(), kPageVariables);
  const window_reader reader(memory.span(), kPageVariables);
  EXPECT_EQ(reader.snapshot([](const window_stand&) { return false; }),
            window_reader::outcome::declined);
  window.begin_change();
  EXPECT_EQ(reader.snapshot([](const window_stand&) { return true; }),
            window_reader::outcome::changing);
  window.end_change();
  EXPECT_EQ(reader.snapshot([](const window_stand&) { return true; }),
            window_reader::outcome::consistent);
}

// A reader that sleeps until the owner moves on past the stand it saw is woken when the
// owner publishes (long before its timeout), and says what it wants to the owner; one whose
// owner already stands further on does not sleep at all.
TEST(CopyWindow, AReaderWaitingForTheOwnerIsWokenWhenItMovesOn) {
  const window_memory memory(kHeader + kPageVariables * sizeof(shared_variable));
  copy_window window(memory.span(), kPageVariables);
  const window_reader reader(memory.span(), kPageVariables);
  window.publish_through(4);
  EXPECT_EQ(window.wanted(), 0u);
  reader.want(6);
  reader.want(5);  // the highest want stands
  EXPECT_EQ(window.wanted(), 6u);

  auto start = std::chrono::steady_clock::now();
  reader.wait_past(3, absl::Seconds(30), [] { return true; });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10))
      << "slept although the owner already stood further on";

  std::atomic<bool> woke{false};
  std::thread waiter([&] {
    reader.wait_past(4, absl::Seconds(30), [] { return true; });
    woke = true;
  });
  // The owner moves on once the waiter has announced its sleep: from there on, only the
  // owner's ring ends the sleep before its timeout.
  const auto& header = *reinterpret_cast<const window_header*>(memory.data());
  while (header.advanced.sleepers.load() == 0) std::this_thread::yield();
  start = std::chrono::steady_clock::now();
  window.publish_through(5);
  waiter.join();
  EXPECT_TRUE(woke.load());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10))
      << "the waiter slept out its timeout: the owner's move was lost";
}

}  // namespace
