// Read slots: values arrive in pieces in any order and the slot is ready when all have; a
// reply that matches no open slot, or repeats a value, is InvalidArgument naming the slot;
// a slot closed early is freed when its values arrive; stale tickets touch nothing.
#include "runtime/smm/read_slots.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace iso::runtime {
namespace {

using ::testing::ElementsAre;

std::vector<std::uint64_t> as_vector(std::span<const std::uint64_t> s) {
  return {s.begin(), s.end()};
}

TEST(ReadSlots, ValuesArrivingInPiecesInAnyOrderCompleteTheSlot) {
  read_slots slots;
  const read_slots::ticket t = slots.open(4);
  EXPECT_EQ(slots.size(t.slot), 4u);
  EXPECT_EQ(slots.outstanding(), 1u);
  EXPECT_FALSE(slots.ready(t));
  const std::vector<std::uint64_t> tail{30, 40};
  const std::vector<std::uint64_t> head{10};
  const std::vector<std::uint64_t> middle{20};
  ASSERT_TRUE(slots.fill(t.slot, 2, tail).ok());
  ASSERT_TRUE(slots.fill(t.slot, 0, head).ok());
  EXPECT_FALSE(slots.ready(t));
  EXPECT_EQ(slots.outstanding(), 1u);
  ASSERT_TRUE(slots.fill(t.slot, 1, middle).ok());
  EXPECT_TRUE(slots.ready(t));
  EXPECT_EQ(slots.outstanding(), 0u);
  EXPECT_THAT(as_vector(slots.values(t)), ElementsAre(10u, 20u, 30u, 40u));
}

TEST(ReadSlots, FillAllServesAWholeReadAtOnce) {
  read_slots slots;
  const read_slots::ticket t = slots.open(3);
  const std::vector<std::uint64_t> values{7, 8, 9};
  slots.fill_all(t.slot, values);
  EXPECT_TRUE(slots.ready(t));
  EXPECT_EQ(slots.outstanding(), 0u);
  EXPECT_THAT(as_vector(slots.values(t)), ElementsAre(7u, 8u, 9u));
}

TEST(ReadSlots, EachOpenSlotIsItsOwn) {
  read_slots slots;
  const read_slots::ticket a = slots.open(1);
  const read_slots::ticket b = slots.open(2);
  EXPECT_NE(a.slot, b.slot);
  EXPECT_EQ(slots.outstanding(), 2u);
  const std::vector<std::uint64_t> two{5, 6};
  ASSERT_TRUE(slots.fill(b.slot, 0, two).ok());
  EXPECT_FALSE(slots.ready(a));
  EXPECT_TRUE(slots.ready(b));
  EXPECT_EQ(slots.outstanding(), 1u);
}

TEST(ReadSlots, ReplyForNoOpenSlotIsInvalidNamingIt) {
  read_slots slots;
  const std::vector<std::uint64_t> one{1};
  EXPECT_EQ(slots.fill(3, 0, one),
            absl::InvalidArgumentError(
                "read reply for slot 3, values 0..1, matches no outstanding read"));
  const read_slots::ticket t = slots.open(2);
  const std::vector<std::uint64_t> two{1, 2};
  ASSERT_TRUE(slots.fill(t.slot, 0, two).ok());
  slots.close(t);
  // Closed and freed: a late reply is not taken for a read.
  EXPECT_EQ(slots.fill(t.slot, 0, one).code(), absl::StatusCode::kInvalidArgument);
}

TEST(ReadSlots, ReplyPastTheEndOfTheSlotIsInvalidAndStoresNothing) {
  read_slots slots;
  const read_slots::ticket t = slots.open(3);
  const std::vector<std::uint64_t> two{1, 2};
  EXPECT_EQ(slots.fill(t.slot, 2, two),
            absl::InvalidArgumentError(
                "read reply for slot 0, values 2..4, matches no outstanding read"));
  // A first index so large that first + count would wrap a 32-bit sum.
  EXPECT_EQ(slots.fill(t.slot, 0xffffffffu, two).code(), absl::StatusCode::kInvalidArgument);
  const std::vector<std::uint64_t> three{4, 5, 6};
  ASSERT_TRUE(slots.fill(t.slot, 0, three).ok());
  EXPECT_THAT(as_vector(slots.values(t)), ElementsAre(4u, 5u, 6u));
}

TEST(ReadSlots, SecondReplyForAValueIsInvalidNamingIt) {
  read_slots slots;
  const read_slots::ticket t = slots.open(3);
  const std::vector<std::uint64_t> one{1};
  ASSERT_TRUE(slots.fill(t.slot, 1, one).ok());
  EXPECT_EQ(slots.fill(t.slot, 1, one),
            absl::InvalidArgumentError("second reply for value 1 of read slot 0"));
  EXPECT_EQ(slots.outstanding(), 1u);
}

TEST(ReadSlots, RejectedReplyChangesNothing) {
  // Value 1 has arrived; a reply for values 0..2 repeats it and is rejected whole, so
  // values 0 and 2 are still awaited and the read can still complete.
  read_slots slots;
  const read_slots::ticket t = slots.open(3);
  const std::vector<std::uint64_t> one{20};
  ASSERT_TRUE(slots.fill(t.slot, 1, one).ok());
  const std::vector<std::uint64_t> three{91, 92, 93};
  EXPECT_EQ(slots.fill(t.slot, 0, three).code(), absl::StatusCode::kInvalidArgument);
  const std::vector<std::uint64_t> first{10};
  const std::vector<std::uint64_t> last{30};
  EXPECT_TRUE(slots.fill(t.slot, 0, first).ok());
  EXPECT_TRUE(slots.fill(t.slot, 2, last).ok());
  ASSERT_TRUE(slots.ready(t));
  EXPECT_THAT(as_vector(slots.values(t)), ElementsAre(10u, 20u, 30u));
  EXPECT_EQ(slots.outstanding(), 0u);
}

TEST(ReadSlots, EmptyReplyCountsNothing) {
  read_slots slots;
  const read_slots::ticket done = slots.open(1);
  const std::vector<std::uint64_t> one{1};
  ASSERT_TRUE(slots.fill(done.slot, 0, one).ok());
  const read_slots::ticket waiting = slots.open(2);
  ASSERT_EQ(slots.outstanding(), 1u);
  // An empty reply for a slot that is complete (or that never needed values) completes no
  // read a second time.
  EXPECT_TRUE(slots.fill(done.slot, 0, {}).ok());
  EXPECT_EQ(slots.outstanding(), 1u);
  const read_slots::ticket none = slots.open(0);
  EXPECT_TRUE(slots.ready(none));
  EXPECT_TRUE(slots.fill(none.slot, 0, {}).ok());
  EXPECT_EQ(slots.outstanding(), 1u);
  EXPECT_FALSE(slots.ready(waiting));
}

TEST(ReadSlots, ReadOfNoValuesIsReadyAtOnce) {
  read_slots slots;
  const read_slots::ticket t = slots.open(0);
  EXPECT_TRUE(slots.ready(t));
  EXPECT_EQ(slots.outstanding(), 0u);
  EXPECT_TRUE(slots.values(t).empty());
}

TEST(ReadSlots, ClosedReadySlotIsReusedWithANewGeneration) {
  read_slots slots;
  const read_slots::ticket first = slots.open(1);
  const std::vector<std::uint64_t> one{1};
  ASSERT_TRUE(slots.fill(first.slot, 0, one).ok());
  slots.close(first);
  const read_slots::ticket second = slots.open(2);
  EXPECT_EQ(second.slot, first.slot);
  EXPECT_NE(second.generation, first.generation);
  EXPECT_EQ(slots.size(second.slot), 2u);
  EXPECT_FALSE(slots.ready(second));
  // The reused slot forgot the old read's values.
  const std::vector<std::uint64_t> two{5, 6};
  EXPECT_TRUE(slots.fill(second.slot, 0, two).ok());
  EXPECT_THAT(as_vector(slots.values(second)), ElementsAre(5u, 6u));
}

TEST(ReadSlots, SlotClosedEarlyIsFreedWhenItsValuesArrive) {
  read_slots slots;
  const read_slots::ticket dropped = slots.open(2);
  slots.close(dropped);
  // Still waiting: not reused yet, and its values are still expected.
  EXPECT_EQ(slots.outstanding(), 1u);
  const read_slots::ticket other = slots.open(1);
  EXPECT_NE(other.slot, dropped.slot);
  const std::vector<std::uint64_t> two{1, 2};
  ASSERT_TRUE(slots.fill(dropped.slot, 0, two).ok());
  EXPECT_EQ(slots.outstanding(), 1u);  // `other`
  const read_slots::ticket reused = slots.open(1);
  EXPECT_EQ(reused.slot, dropped.slot);
}

TEST(ReadSlots, SlotClosedEarlyIsFreedByFillAllToo) {
  read_slots slots;
  const read_slots::ticket dropped = slots.open(1);
  slots.close(dropped);
  const std::vector<std::uint64_t> one{1};
  slots.fill_all(dropped.slot, one);
  EXPECT_EQ(slots.outstanding(), 0u);
  EXPECT_EQ(slots.open(1).slot, dropped.slot);
}

TEST(ReadSlots, StaleTicketDoesNotCloseTheSlotsNextRead) {
  read_slots slots;
  const read_slots::ticket old = slots.open(1);
  const std::vector<std::uint64_t> one{1};
  ASSERT_TRUE(slots.fill(old.slot, 0, one).ok());
  slots.close(old);
  const read_slots::ticket current = slots.open(1);
  ASSERT_EQ(current.slot, old.slot);
  slots.close(old);  // a second close through the old ticket
  ASSERT_TRUE(slots.fill(current.slot, 0, one).ok());
  EXPECT_TRUE(slots.ready(current));
  // Still open: the next read takes another slot.
  EXPECT_NE(slots.open(1).slot, current.slot);
}

TEST(ReadSlotsDeathTest, ValuesBeforeTheyArriveIsABug) {
  read_slots slots;
  const read_slots::ticket t = slots.open(2);
  const std::vector<std::uint64_t> one{1};
  ASSERT_TRUE(slots.fill(t.slot, 0, one).ok());
  EXPECT_DEATH((void)slots.values(t), "values of read slot 0 taken before they arrived");
}

}  // namespace
}  // namespace iso::runtime
