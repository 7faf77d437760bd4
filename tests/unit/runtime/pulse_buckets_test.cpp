// Pulse buckets: items filed per pulse in arrival order whatever order the pulses come in,
// taken out whole, held operations copied out (and their records released) at unhold, and
// taken lists and buffers reused after recycle without stale contents.
#include "runtime/smm/pulse_buckets.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace iso::runtime {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<std::byte> bytes_of(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

std::vector<std::byte> copy_of(std::span<const std::byte> s) { return {s.begin(), s.end()}; }

std::vector<std::uint32_t> sequences(const std::vector<bucket_item>& items) {
  std::vector<std::uint32_t> out;
  out.reserve(items.size());
  for (const bucket_item& item : items) out.push_back(item.sequence);
  return out;
}

TEST(PulseBuckets, TakeOfAPulseWithNothingFiledIsEmpty) {
  pulse_buckets buckets;
  EXPECT_EQ(buckets.size(), 0u);
  EXPECT_THAT(buckets.take(4), IsEmpty());
  EXPECT_EQ(buckets.size(), 0u);
}

TEST(PulseBuckets, HeldItemKeepsItsOperationsInPlace) {
  pulse_buckets buckets;
  const std::vector<std::byte> ops = bytes_of({1, 2, 3, 4});
  buckets.add_held(10, 3, 7, ops, 99);
  EXPECT_EQ(buckets.size(), 1u);
  std::vector<bucket_item> items = buckets.take(10);
  EXPECT_EQ(buckets.size(), 0u);
  ASSERT_EQ(items.size(), 1u);
  const bucket_item& item = items[0];
  EXPECT_EQ(item.source, 3u);
  EXPECT_EQ(item.sequence, 7u);
  EXPECT_FALSE(item.own_marker);
  EXPECT_TRUE(item.held);
  EXPECT_EQ(item.record, 99u);
  // Not copied: the operations are the caller's bytes.
  EXPECT_EQ(item.operations().data(), ops.data());
  EXPECT_EQ(item.operations().size(), ops.size());
  EXPECT_TRUE(buckets.take(10).empty());
}

TEST(PulseBuckets, ItemsOfAPulseStayInArrivalOrder) {
  pulse_buckets buckets;
  const std::vector<std::byte> ops = bytes_of({1});
  buckets.add_held(5, 2, 1, ops, 0);
  buckets.add_held(5, 1, 2, ops, 0);
  buckets.add_marker(5, 0, 3, 1);
  buckets.add_held(5, 2, 4, ops, 0);
  EXPECT_EQ(buckets.size(), 1u);
  EXPECT_THAT(sequences(buckets.take(5)), ElementsAre(1u, 2u, 3u, 4u));
}

TEST(PulseBuckets, PulsesArrivingOutOfOrderAreKeptApart) {
  pulse_buckets buckets;
  const std::vector<std::byte> ops = bytes_of({1});
  buckets.add_held(7, 1, 70, ops, 0);
  buckets.add_held(5, 1, 50, ops, 0);
  buckets.add_held(6, 1, 60, ops, 0);
  buckets.add_held(5, 2, 51, ops, 0);
  buckets.add_held(9, 1, 90, ops, 0);
  buckets.add_held(7, 2, 71, ops, 0);
  EXPECT_EQ(buckets.size(), 4u);
  EXPECT_THAT(sequences(buckets.take(6)), ElementsAre(60u));
  EXPECT_THAT(sequences(buckets.take(9)), ElementsAre(90u));
  EXPECT_THAT(sequences(buckets.take(5)), ElementsAre(50u, 51u));
  EXPECT_THAT(sequences(buckets.take(7)), ElementsAre(70u, 71u));
  EXPECT_EQ(buckets.size(), 0u);
}

TEST(PulseBuckets, MarkerCoversARunOfThisNodesIsochrons) {
  pulse_buckets buckets;
  buckets.add_marker(12, 4, 100, 3);
  std::vector<bucket_item> items = buckets.take(12);
  ASSERT_EQ(items.size(), 1u);
  EXPECT_TRUE(items[0].own_marker);
  EXPECT_EQ(items[0].source, 4u);
  EXPECT_EQ(items[0].sequence, 100u);
  EXPECT_EQ(items[0].isochrons, 3u);
  EXPECT_FALSE(items[0].held);
  EXPECT_TRUE(items[0].operations().empty());
}

TEST(PulseBuckets, UnholdCopiesOutAndReleasesEachHeldItemOnce) {
  pulse_buckets buckets;
  std::vector<std::byte> first = bytes_of({1, 2, 3});
  std::vector<std::byte> second = bytes_of({4, 5});
  buckets.add_held(3, 1, 0, first, 31);
  buckets.add_marker(3, 0, 1, 1);
  buckets.add_held(4, 2, 0, second, 41);
  std::vector<std::uint64_t> released;
  buckets.unhold([&](const bucket_item& item) {
    EXPECT_FALSE(item.held);
    released.push_back(item.record);
  });
  EXPECT_THAT(released, ElementsAre(31u, 41u));
  // The records may now be reused: the items keep their own copies.
  first.assign(first.size(), std::byte{0});
  second.assign(second.size(), std::byte{0});
  buckets.unhold([&](const bucket_item& item) { released.push_back(item.record); });
  EXPECT_EQ(released.size(), 2u);
  std::vector<bucket_item> three = buckets.take(3);
  ASSERT_EQ(three.size(), 2u);
  EXPECT_EQ(copy_of(three[0].operations()), bytes_of({1, 2, 3}));
  EXPECT_TRUE(three[1].own_marker);
  std::vector<bucket_item> four = buckets.take(4);
  ASSERT_EQ(four.size(), 1u);
  EXPECT_EQ(copy_of(four[0].operations()), bytes_of({4, 5}));
}

TEST(PulseBuckets, UnholdOfEmptyOperationsStillReleasesTheRecord) {
  pulse_buckets buckets;
  buckets.add_held(1, 1, 0, {}, 8);
  int released = 0;
  buckets.unhold([&](const bucket_item& item) {
    EXPECT_EQ(item.record, 8u);
    ++released;
  });
  EXPECT_EQ(released, 1);
  std::vector<bucket_item> items = buckets.take(1);
  ASSERT_EQ(items.size(), 1u);
  EXPECT_TRUE(items[0].operations().empty());
}

TEST(PulseBuckets, RecycledListsAndBuffersCarryNothingOver) {
  pulse_buckets buckets;
  const std::vector<std::byte> big = bytes_of({1, 2, 3, 4, 5, 6, 7, 8, 9});
  buckets.add_held(1, 1, 10, big, 1);
  buckets.add_marker(1, 0, 11, 2);
  buckets.unhold([](const bucket_item&) {});
  std::vector<bucket_item> taken = buckets.take(1);
  ASSERT_EQ(taken.size(), 2u);
  const std::byte* buffer = taken[0].ops.bytes().data();
  buckets.recycle(std::move(taken));

  // The next pulse gets a list with only its own item, and the copied-out operations land
  // in the recycled buffer (a steady stream allocates nothing) holding only the new bytes.
  const std::vector<std::byte> small = bytes_of({42});
  buckets.add_held(2, 3, 20, small, 2);
  buckets.unhold([](const bucket_item&) {});
  std::vector<bucket_item> again = buckets.take(2);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_FALSE(again[0].own_marker);
  EXPECT_EQ(again[0].isochrons, 1u);
  EXPECT_EQ(again[0].source, 3u);
  EXPECT_EQ(again[0].sequence, 20u);
  EXPECT_EQ(copy_of(again[0].operations()), small);
  EXPECT_EQ(again[0].ops.bytes().data(), buffer);
}

TEST(PulseBuckets, ItemsTakenWhileHeldStillReadTheRecord) {
  // The usual case: the pulse runs in the round that delivered it, nothing is copied.
  pulse_buckets buckets;
  const std::vector<std::byte> ops = bytes_of({5, 6});
  buckets.add_held(2, 1, 0, ops, 0);
  std::vector<bucket_item> items = buckets.take(2);
  int released = 0;
  buckets.unhold([&](const bucket_item&) { ++released; });
  EXPECT_EQ(released, 0);
  ASSERT_EQ(items.size(), 1u);
  EXPECT_TRUE(items[0].held);
  EXPECT_EQ(items[0].ops.size(), 0u);
  EXPECT_EQ(copy_of(items[0].operations()), ops);
}

TEST(PulseBuckets, TakingOneHeldPulseLeavesTheOthersHeld) {
  // unhold() skips its search when it counts nothing held: taking one pulse must not make
  // it forget another pulse's held items, or their records would never be released.
  pulse_buckets buckets;
  const std::vector<std::byte> ops = bytes_of({7});
  buckets.add_held(5, 1, 0, ops, 50);
  buckets.add_held(6, 1, 1, ops, 60);
  buckets.add_held(6, 2, 0, ops, 61);
  std::vector<bucket_item> five = buckets.take(5);
  ASSERT_EQ(five.size(), 1u);
  std::vector<std::uint64_t> released;
  buckets.unhold([&](const bucket_item& item) { released.push_back(item.record); });
  EXPECT_THAT(released, ElementsAre(60u, 61u));
  buckets.add_held(7, 1, 2, ops, 70);
  buckets.unhold([&](const bucket_item& item) { released.push_back(item.record); });
  EXPECT_THAT(released, ElementsAre(60u, 61u, 70u));
}

}  // namespace
}  // namespace iso::runtime
