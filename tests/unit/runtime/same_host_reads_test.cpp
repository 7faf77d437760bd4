// Same-host reads as a unit: noted reads are served from the owner's window at the place
// its stand gives them, and refused, saying why, when the owner stands behind what this
// node has seen, when a later isochron of this node could sit earlier, when a variable
// waits for its assign, or when there is no window to read.
#include "runtime/smm/same_host_reads.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "nicfw/topology.hpp"
#include "tests/support/window_memory.hpp"

namespace iso::runtime {
namespace {

using ::testing::ElementsAre;
using outcome = same_host_reads::outcome;

constexpr std::uint32_t kPageVariables = 8;
constexpr std::uint32_t kNodes = 2;

// Node 0 reads; node 1 holds the only copy of one page, in its window.
class SameHostReads : public ::testing::Test {
 protected:
  SameHostReads()
      : topo_(nicfw::topology::single_switch(kNodes)),
        pages_(0, topo_, kPageVariables),
        memory_(sizeof(window_header) + 2 * kPageVariables * sizeof(shared_variable)),
        owner_(memory_.span(), kPageVariables) {
    EXPECT_EQ(
        pages_.allocate(kPageVariables, 8, [](std::uint64_t) { return std::vector<node_id>{1}; })
            .value(),
        0u);
    windows_ = {std::span<std::byte>(), memory_.span()};
  }

  // The owner runs pulse `through` and leaves variable i at 10 + i.
  void owner_stands_at(std::uint64_t through) {
    owner_.begin_change();
    for (std::uint32_t i = 0; i < kPageVariables; ++i) store_value(owner_.page(0)[i], 10 + i);
    owner_.publish_through(through);
    owner_.end_change();
  }

  nicfw::topology topo_;
  page_table pages_;
  test::window_memory memory_;
  copy_window owner_;
  std::vector<std::span<std::byte>> windows_;
};

TEST_F(SameHostReads, ServesNotedReadsFromTheOwnersWindowAtItsStand) {
  owner_stands_at(5);
  same_host_reads reads(0, pages_, windows_, kPageVariables, kNodes);
  ASSERT_TRUE(reads.note(1, *pages_.lookup(2), 2, 3, /*index=*/0, /*slot=*/7, /*first=*/0));
  ASSERT_TRUE(reads.note(1, *pages_.lookup(6), 6, 1, 1, 7, 3));
  order_point at;
  ASSERT_EQ(reads.try_serve(1, order_point{}, /*next_stamp_floor=*/100, at), outcome::served);
  EXPECT_THAT(reads.values(), ElementsAre(12u, 13u, 14u, 16u));
  EXPECT_EQ(at.pulse, 5u);
  EXPECT_EQ(at.slot, kNodes + 1);  // after pulse 5's operations, in node 1's place
  ASSERT_EQ(reads.reads().size(), 2u);
  EXPECT_EQ(reads.reads()[1].first, 3u);
  reads.clear();
  EXPECT_TRUE(reads.reads().empty());
}

TEST_F(SameHostReads, AnOwnerBehindWhatThisNodeHasSeenIsToldApart) {
  owner_stands_at(5);
  same_host_reads reads(0, pages_, windows_, kPageVariables, kNodes);
  ASSERT_TRUE(reads.note(1, *pages_.lookup(0), 0, 1, 0, 0, 0));
  order_point at;
  EXPECT_EQ(reads.try_serve(1, order_point{.pulse = 6}, 100, at), outcome::owner_behind);
  owner_stands_at(6);
  EXPECT_EQ(reads.try_serve(1, order_point{.pulse = 6}, 100, at), outcome::served);
}

// At the owner's pulse, a read that must sit after what this node has seen takes a step
// that puts it there, and raises the owner's step to it: the owner's next change sits
// there or later, so the state read holds at that place.
TEST_F(SameHostReads, AtTheOwnersPulseAStepPutsTheReadAfterWhatThisNodeHasSeen) {
  owner_stands_at(5);
  same_host_reads reads(0, pages_, windows_, kPageVariables, kNodes);
  ASSERT_TRUE(reads.note(1, *pages_.lookup(0), 0, 1, 0, 0, 0));
  order_point at;
  // This node's own local isochron at step 3 (its slot is lower than the owner's).
  const order_point own{.pulse = 5, .step = 3, .slot = kNodes + 0, .rank = 7, .kind = 1};
  ASSERT_EQ(reads.try_serve(1, own, 100, at), outcome::served);
  EXPECT_EQ(at, (order_point{.pulse = 5, .step = 3, .slot = kNodes + 1, .rank = 0, .kind = 0}));
  // An earlier read of this owner's copy, right before a later local isochron of its:
  // the owner now stands before it at step 3, so the read needs step 4.
  const order_point read{.pulse = 5, .step = 3, .slot = kNodes + 1, .rank = 9, .kind = 0};
  ASSERT_EQ(reads.try_serve(1, read, 100, at), outcome::served);
  EXPECT_EQ(at.step, 4u);
  EXPECT_GE(at, read);
  owner_.begin_change();
  EXPECT_EQ(owner_.change_step(0), 4u);
  owner_.end_change();
  // Without a step, the owner's copies do (it stood there, changed nothing since).
  EXPECT_EQ(reads.try_serve(1, order_point{.pulse = 5}, 100, at), outcome::served);
  EXPECT_EQ(at.step, 4u);
}

TEST_F(SameHostReads, DeclinedWhereALaterIsochronOfThisNodeCouldSitEarlier) {
  owner_stands_at(5);
  same_host_reads reads(0, pages_, windows_, kPageVariables, kNodes);
  ASSERT_TRUE(reads.note(1, *pages_.lookup(0), 0, 1, 0, 0, 0));
  order_point at;
  EXPECT_EQ(reads.try_serve(1, order_point{}, /*next_stamp_floor=*/5, at), outcome::declined);
  EXPECT_EQ(reads.try_serve(1, order_point{}, 6, at), outcome::served);
}

TEST_F(SameHostReads, DeclinedWhileAVariableWaitsForItsAssign) {
  owner_stands_at(5);
  owner_.page(0)[3].sched_by = 2;
  same_host_reads reads(0, pages_, windows_, kPageVariables, kNodes);
  ASSERT_TRUE(reads.note(1, *pages_.lookup(2), 2, 3, 0, 0, 0));
  order_point at;
  EXPECT_EQ(reads.try_serve(1, order_point{}, 100, at), outcome::declined);
}

TEST_F(SameHostReads, NothingIsNotedWithoutTheOwnersWindow) {
  const std::vector<std::span<std::byte>> only_mine = {memory_.span()};
  same_host_reads reads(0, pages_, only_mine, kPageVariables, kNodes);
  EXPECT_FALSE(reads.note(1, *pages_.lookup(0), 0, 1, 0, 0, 0));
  // A page whose nearest copy is elsewhere is not this owner's to serve.
  same_host_reads with_window(0, pages_, windows_, kPageVariables, kNodes);
  EXPECT_FALSE(with_window.note(0, *pages_.lookup(0), 0, 1, 0, 0, 0));
}

}  // namespace
}  // namespace iso::runtime
