// The isochron builder: reads go to the nearest copy and changes to every copy, ranges are
// split at page borders, every destination's stream starts with the rank, the distance is
// the largest to a remote destination, and every rejected operation (with the code and
// message its header gives) leaves the isochron as it was.
#include "runtime/smm/isochron_builder.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace iso::runtime {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// One record of a stream, decoded.
struct record {
  op_header header{};
  read_body read{};
  std::vector<std::uint64_t> values;
  std::vector<std::byte> payload;
  std::uint64_t instance = 0;
};

struct decoded {
  std::uint64_t rank = 0;
  std::vector<record> records;
};

// Decodes a stream as the destination would (operations.hpp); fails the test on anything
// malformed or left over.
decoded decode(std::span<const std::byte> stream) {
  decoded out;
  op_reader in(stream);
  stream_header sh{};
  EXPECT_TRUE(in.get(sh)) << "no stream header";
  out.rank = sh.rank;
  while (!in.done()) {
    record r;
    if (!in.get(r.header)) {
      ADD_FAILURE() << "truncated header";
      break;
    }
    switch (r.header.code) {
      case op_code::read:
        EXPECT_TRUE(in.get(r.read));
        break;
      case op_code::write:
      case op_code::assign:
        r.values.resize(r.header.count);
        for (std::uint64_t& v : r.values) EXPECT_TRUE(in.get(v));
        break;
      case op_code::message:
      case op_code::queued: {
        std::span<const std::byte> bytes;
        EXPECT_TRUE(in.get_bytes(r.header.count, bytes));
        r.payload.assign(bytes.begin(), bytes.end());
        break;
      }
      case op_code::barrier:
        EXPECT_TRUE(in.get(r.instance));
        break;
      default:
        break;
    }
    out.records.push_back(std::move(r));
  }
  return out;
}

// s0 {0, 1} - s1 {2} - s2 {3, 4}: node 0 is 2 from node 1, 4 from node 2 and 6 from 3 and 4.
nicfw::topology chain() {
  absl::StatusOr<nicfw::topology> topo =
      nicfw::parse_topology(R"pb(
                              switch { name: "s0" node: 0 node: 1 link: "s1" }
                              switch { name: "s1" node: 2 link: "s2" }
                              switch { name: "s2" node: 3 node: 4 }
                            )pb",
                            5);
  EXPECT_TRUE(topo.ok()) << topo.status();
  return *std::move(topo);
}

copyset_rule on(const std::vector<node_id>& nodes) {
  return [nodes](std::uint64_t) { return nodes; };
}

constexpr std::uint32_t kNodes = 5;
constexpr std::uint32_t kPage = 8;

// Node 0's view of: shared (16 64-bit variables on 0, 2 and 3), remote (8 on 3), narrow
// (8 32-bit on 1) and near (8 on 1 and 4).
class IsochronBuilder : public testing::Test {
 protected:
  IsochronBuilder() : topo_(chain()), pages_(0, topo_, kPage) {
    shared_ = pages_.allocate(16, 8, on({0, 2, 3})).value();
    remote_ = pages_.allocate(8, 8, on({3})).value();
    narrow_ = pages_.allocate(8, 4, on({1})).value();
    near_ = pages_.allocate(8, 8, on({1, 4})).value();
    end_ = near_ + kPage;
  }

  nicfw::topology topo_;
  page_table pages_;
  std::uint64_t shared_ = 0, remote_ = 0, narrow_ = 0, near_ = 0, end_ = 0;
};

TEST_F(IsochronBuilder, BeginOpensAnEmptyIsochron) {
  isochron_builder b(0, kNodes, pages_);
  EXPECT_FALSE(b.open());
  b.begin(17);
  EXPECT_TRUE(b.open());
  EXPECT_TRUE(b.empty());
  EXPECT_TRUE(b.reads_only());
  EXPECT_FALSE(b.has_local_part());
  EXPECT_THAT(b.remote_destinations(), IsEmpty());
  EXPECT_EQ(b.delta(), 0u);
  EXPECT_EQ(b.rank(), 17u);
  EXPECT_EQ(b.total_bytes(), 0u);
  b.close();
  EXPECT_FALSE(b.open());
}

TEST_F(IsochronBuilder, ReadGoesToTheNearestCopyOnly) {
  isochron_builder b(0, kNodes, pages_);
  b.begin(3);
  ASSERT_TRUE(b.add(op_code::read, 8, near_ + 2, 3, {}, 11).ok());
  EXPECT_FALSE(b.empty());
  EXPECT_TRUE(b.reads_only());
  EXPECT_THAT(b.remote_destinations(), ElementsAre(1u));
  EXPECT_FALSE(b.has_local_part());
  EXPECT_EQ(b.delta(), 2u);
  EXPECT_TRUE(b.stream(4).empty());
  const decoded s = decode(b.stream(1));
  EXPECT_EQ(s.rank, 3u);
  ASSERT_EQ(s.records.size(), 1u);
  EXPECT_EQ(s.records[0].header.code, op_code::read);
  EXPECT_EQ(s.records[0].header.width, 8u);
  EXPECT_EQ(s.records[0].header.index, 0u);
  EXPECT_EQ(s.records[0].header.count, 3u);
  EXPECT_EQ(s.records[0].header.address, near_ + 2);
  EXPECT_EQ(s.records[0].read.slot, 11u);
  EXPECT_EQ(s.records[0].read.first, 0u);
}

TEST_F(IsochronBuilder, ReadOfALocalCopyIsTheLocalPart) {
  isochron_builder b(0, kNodes, pages_);
  b.begin(0);
  ASSERT_TRUE(b.add(op_code::read, 8, shared_, 1, {}, 0).ok());
  EXPECT_TRUE(b.has_local_part());
  EXPECT_THAT(b.remote_destinations(), IsEmpty());
  EXPECT_EQ(b.delta(), 0u);
  EXPECT_EQ(decode(b.stream(0)).records.size(), 1u);
}

TEST_F(IsochronBuilder, ChangesGoToEveryCopyAndDeltaIsTheFarthest) {
  isochron_builder b(0, kNodes, pages_);
  b.begin(9);
  const std::vector<std::uint64_t> values{5, 6};
  ASSERT_TRUE(b.add(op_code::write, 8, shared_ + 1, 2, values, 0).ok());
  EXPECT_FALSE(b.reads_only());
  EXPECT_TRUE(b.has_local_part());
  EXPECT_THAT(b.remote_destinations(), ElementsAre(2u, 3u));
  EXPECT_EQ(b.delta(), 6u);
  for (node_id n : {0u, 2u, 3u}) {
    const decoded s = decode(b.stream(n));
    EXPECT_EQ(s.rank, 9u);
    ASSERT_EQ(s.records.size(), 1u) << "node " << n;
    EXPECT_EQ(s.records[0].header.code, op_code::write);
    EXPECT_EQ(s.records[0].header.address, shared_ + 1);
    EXPECT_THAT(s.records[0].values, ElementsAre(5u, 6u));
  }
  EXPECT_TRUE(b.stream(1).empty());
  EXPECT_TRUE(b.stream(4).empty());
}

TEST_F(IsochronBuilder, DeltaIsTheLargestDistanceWhateverTheOrder) {
  isochron_builder b(0, kNodes, pages_);
  b.begin(0);
  ASSERT_TRUE(b.add(op_code::read, 8, remote_, 1, {}, 0).ok());  // node 3, 6 away
  ASSERT_TRUE(b.add(op_code::read, 8, near_, 1, {}, 1).ok());    // node 1, 2 away
  EXPECT_THAT(b.remote_destinations(), ElementsAre(1u, 3u));
  EXPECT_EQ(b.delta(), 6u);
}

TEST_F(IsochronBuilder, SchedCarriesNoValuesAndAssignCarriesThem) {
  isochron_builder b(0, kNodes, pages_);
  b.begin(0);
  ASSERT_TRUE(b.add(op_code::sched, 8, remote_, 2, {}, 0).ok());
  const std::vector<std::uint64_t> values{7, 8};
  ASSERT_TRUE(b.add(op_code::assign, 8, remote_, 2, values, 0).ok());
  const decoded s = decode(b.stream(3));
  ASSERT_EQ(s.records.size(), 2u);
  EXPECT_EQ(s.records[0].header.code, op_code::sched);
  EXPECT_THAT(s.records[0].values, IsEmpty());
  EXPECT_EQ(s.records[1].header.code, op_code::assign);
  EXPECT_EQ(s.records[1].header.index, 1u);
  EXPECT_THAT(s.records[1].values, ElementsAre(7u, 8u));
  // The stream holds exactly the rank, two headers and two values.
  EXPECT_EQ(b.stream(3).size(), sizeof(stream_header) + 2 * sizeof(op_header) + 16);
  EXPECT_EQ(b.total_bytes(), b.stream(3).size());
}

TEST_F(IsochronBuilder, RangeSpanningPagesIsSplitAtPageBordersWithOneIndex) {
  isochron_builder b(0, kNodes, pages_);
  b.begin(0);
  ASSERT_TRUE(b.add(op_code::read, 8, near_, 1, {}, 0).ok());  // index 0
  // shared_ + 6 .. remote_ + 1: two variables on shared's first page, eight on its second,
  // two on remote's page.
  std::vector<std::uint64_t> values(12);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = 100 + i;
  ASSERT_TRUE(b.add(op_code::write, 8, shared_ + 6, 12, values, 0).ok());  // index 1
  const decoded on3 = decode(b.stream(3));
  ASSERT_EQ(on3.records.size(), 3u);
  EXPECT_EQ(on3.records[0].header.address, shared_ + 6);
  EXPECT_EQ(on3.records[0].header.count, 2u);
  EXPECT_THAT(on3.records[0].values, ElementsAre(100u, 101u));
  EXPECT_EQ(on3.records[1].header.address, shared_ + 8);
  EXPECT_EQ(on3.records[1].header.count, 8u);
  EXPECT_EQ(on3.records[1].values.front(), 102u);
  EXPECT_EQ(on3.records[1].values.back(), 109u);
  EXPECT_EQ(on3.records[2].header.address, remote_);
  EXPECT_THAT(on3.records[2].values, ElementsAre(110u, 111u));
  for (const record& r : on3.records) EXPECT_EQ(r.header.index, 1u);
  // Node 2 holds shared's pages but not remote's.
  const decoded on2 = decode(b.stream(2));
  ASSERT_EQ(on2.records.size(), 2u);
  EXPECT_EQ(on2.records[1].header.count, 8u);
}

TEST_F(IsochronBuilder, SplitReadNamesWhereEachPieceGoesInTheSlot) {
  isochron_builder b(0, kNodes, pages_);
  b.begin(0);
  // shared_ + 14 .. remote_ + 2: two local variables, then three on node 3.
  ASSERT_TRUE(b.add(op_code::read, 8, shared_ + 14, 5, {}, 4).ok());
  const decoded local = decode(b.stream(0));
  ASSERT_EQ(local.records.size(), 1u);
  EXPECT_EQ(local.records[0].header.count, 2u);
  EXPECT_EQ(local.records[0].read.slot, 4u);
  EXPECT_EQ(local.records[0].read.first, 0u);
  const decoded far = decode(b.stream(3));
  ASSERT_EQ(far.records.size(), 1u);
  EXPECT_EQ(far.records[0].header.address, remote_);
  EXPECT_EQ(far.records[0].header.count, 3u);
  EXPECT_EQ(far.records[0].read.slot, 4u);
  EXPECT_EQ(far.records[0].read.first, 2u);
}

TEST_F(IsochronBuilder, BeginClearsThePreviousIsochron) {
  isochron_builder b(0, kNodes, pages_);
  b.begin(1);
  const std::vector<std::uint64_t> one{1};
  ASSERT_TRUE(b.add(op_code::write, 8, shared_, 1, one, 0).ok());
  b.begin(2);
  EXPECT_TRUE(b.empty());
  EXPECT_TRUE(b.reads_only());
  EXPECT_FALSE(b.has_local_part());
  EXPECT_THAT(b.remote_destinations(), IsEmpty());
  EXPECT_EQ(b.delta(), 0u);
  EXPECT_EQ(b.total_bytes(), 0u);
  ASSERT_TRUE(b.add(op_code::read, 8, remote_, 1, {}, 0).ok());
  EXPECT_THAT(b.remote_destinations(), ElementsAre(3u));
  const decoded s = decode(b.stream(3));
  EXPECT_EQ(s.rank, 2u);
  ASSERT_EQ(s.records.size(), 1u);
  EXPECT_EQ(s.records[0].header.index, 0u);
  EXPECT_TRUE(b.stream(2).empty());
}

TEST_F(IsochronBuilder, ZeroVariablesIsInvalid) {
  isochron_builder b(0, kNodes, pages_);
  b.begin(0);
  EXPECT_EQ(b.add(op_code::read, 8, shared_, 0, {}, 0),
            absl::InvalidArgumentError("an operation needs at least one variable"));
  EXPECT_TRUE(b.empty());
}

TEST_F(IsochronBuilder, AddressOutsideMemoryIsOutOfRangeAndAddsNothing) {
  isochron_builder b(0, kNodes, pages_);
  b.begin(0);
  const absl::Status outside = b.add(op_code::read, 8, end_ + 100, 1, {}, 0);
  EXPECT_EQ(outside.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(outside.message()),
              HasSubstr("address " + std::to_string(end_ + 100) + " is outside"));
  // A range that starts inside and runs out: rejected whole, naming the first address out.
  const std::vector<std::uint64_t> values(4, 1);
  const absl::Status runs_out = b.add(op_code::write, 8, end_ - 2, 4, values, 0);
  EXPECT_EQ(runs_out.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(runs_out.message()),
              HasSubstr("address " + std::to_string(end_) + " is outside"));
  EXPECT_TRUE(b.empty());
  EXPECT_TRUE(b.reads_only());
  EXPECT_THAT(b.remote_destinations(), IsEmpty());
  EXPECT_TRUE(b.stream(1).empty());
  EXPECT_TRUE(b.stream(4).empty());
  EXPECT_EQ(b.total_bytes(), 0u);
}

TEST_F(IsochronBuilder, RangeWrappingPastTheLastAddressIsOutOfRange) {
  isochron_builder b(0, kNodes, pages_);
  b.begin(0);
  const std::uint64_t last = std::numeric_limits<std::uint64_t>::max();
  EXPECT_EQ(b.add(op_code::sched, 8, last - 1, 3, {}, 0),
            absl::OutOfRangeError("sched of 3 variables from address 18446744073709551614 runs "
                                  "past the last address, 2^64-1"));
  // Ending exactly on the last address does not wrap: it is merely outside memory.
  EXPECT_EQ(b.add(op_code::sched, 8, last - 1, 2, {}, 0).code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(b.add(op_code::sched, 8, last - 1, 2, {}, 0).message()),
              HasSubstr("is outside isotach memory"));
  EXPECT_TRUE(b.empty());
}

TEST_F(IsochronBuilder, WrongWidthIsInvalidNamingTheAddress) {
  isochron_builder b(0, kNodes, pages_);
  b.begin(0);
  EXPECT_EQ(b.add(op_code::read, 8, narrow_ + 3, 1, {}, 0),
            absl::InvalidArgumentError("address " + std::to_string(narrow_ + 3) +
                                       " holds 32-bit variables, not 64-bit"));
  // A 32-bit range that runs into 64-bit variables is rejected whole.
  EXPECT_EQ(b.add(op_code::sched, 4, narrow_ + 6, 4, {}, 0),
            absl::InvalidArgumentError("address " + std::to_string(near_) +
                                       " holds 64-bit variables, not 32-bit"));
  EXPECT_TRUE(b.empty());
  EXPECT_TRUE(b.stream(1).empty());
  ASSERT_TRUE(b.add(op_code::read, 4, narrow_ + 3, 5, {}, 0).ok());
}

TEST_F(IsochronBuilder, HoldsAtMost65535Operations) {
  isochron_builder b(0, kNodes, pages_);
  b.begin(0);
  for (int i = 0; i < 65535; ++i) {
    ASSERT_TRUE(b.add(op_code::read, 8, shared_, 1, {}, 0).ok()) << "operation " << i;
  }
  const absl::Status full =
      absl::ResourceExhaustedError("an isochron holds at most 65535 operations");
  EXPECT_EQ(b.add(op_code::read, 8, shared_, 1, {}, 0), full);
  const std::byte payload[1]{};
  EXPECT_EQ(b.add_message(0, op_code::message, 1, payload), full);
  EXPECT_EQ(b.add_group(op_code::signal, 0, 0, 0), full);
  // The last operation that fit has the largest index.
  const decoded s = decode(b.stream(0));
  ASSERT_EQ(s.records.size(), 65535u);
  EXPECT_EQ(s.records.back().header.index, 65534u);
}

TEST_F(IsochronBuilder, RecordLimitCountsStreamsAndPartOverheadExactly) {
  // A remote write of one variable: the stream header, the op header and one value, plus
  // one part's overhead.
  constexpr std::size_t kOneWrite =
      sizeof(stream_header) + sizeof(op_header) + 8 + isochron_builder::kPartOverhead;
  const std::vector<std::uint64_t> one{1};
  {
    isochron_builder fits(0, kNodes, pages_, {.record_bytes = kOneWrite});
    fits.begin(0);
    EXPECT_TRUE(fits.add(op_code::write, 8, remote_, 1, one, 0).ok());
  }
  isochron_builder b(0, kNodes, pages_, {.record_bytes = kOneWrite - 1});
  b.begin(0);
  const absl::Status s = b.add(op_code::write, 8, remote_, 1, one, 0);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("a write of 1 variables at address " + std::to_string(remote_) +
                        " would make the isochron " + std::to_string(kOneWrite) +
                        " bytes, more than the NIC queue's limit of " +
                        std::to_string(kOneWrite - 1) + " bytes"));
  EXPECT_TRUE(b.empty());
  EXPECT_THAT(b.remote_destinations(), IsEmpty());
  EXPECT_EQ(b.total_bytes(), 0u);
}

TEST_F(IsochronBuilder, RecordLimitCountsEveryCopyOfAChange) {
  // A write to shared_ makes a local stream and two remote parts.
  constexpr std::size_t kStream = sizeof(stream_header) + sizeof(op_header) + 8;
  constexpr std::size_t kRecord = 3 * kStream + 2 * isochron_builder::kPartOverhead;
  const std::vector<std::uint64_t> one{1};
  isochron_builder fits(0, kNodes, pages_, {.record_bytes = kRecord});
  fits.begin(0);
  EXPECT_TRUE(fits.add(op_code::write, 8, shared_, 1, one, 0).ok());
  // The second write adds an op header and a value to each of the three streams.
  EXPECT_EQ(fits.add(op_code::write, 8, shared_, 1, one, 0).code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(fits.total_bytes(), 3 * kStream);
  isochron_builder tight(0, kNodes, pages_, {.record_bytes = kRecord - 1});
  tight.begin(0);
  EXPECT_EQ(tight.add(op_code::write, 8, shared_, 1, one, 0).code(),
            absl::StatusCode::kResourceExhausted);
}

TEST_F(IsochronBuilder, PurelyLocalIsochronIsNotLimitedByTheRecord) {
  isochron_builder b(0, kNodes, pages_, {.record_bytes = 1});
  b.begin(0);
  EXPECT_TRUE(b.add(op_code::read, 8, shared_, 16, {}, 0).ok());
  const std::byte payload[100]{};
  EXPECT_TRUE(b.add_message(0, op_code::message, 1, payload).ok());
  // The first remote destination makes it a record, which is then too large.
  EXPECT_EQ(b.add(op_code::read, 8, remote_, 1, {}, 0).code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(b.has_local_part());
  EXPECT_THAT(b.remote_destinations(), IsEmpty());
}

TEST_F(IsochronBuilder, MessageIsPaddedToEightBytesAndGoesToItsNodeOnly) {
  isochron_builder b(0, kNodes, pages_);
  b.begin(5);
  const std::vector<std::byte> payload{std::byte{1}, std::byte{2}, std::byte{3}};
  ASSERT_TRUE(b.add_message(4, op_code::message, 77, payload).ok());
  EXPECT_FALSE(b.reads_only());
  EXPECT_THAT(b.remote_destinations(), ElementsAre(4u));
  EXPECT_EQ(b.delta(), 6u);
  EXPECT_EQ(b.stream(4).size(), sizeof(stream_header) + sizeof(op_header) + 8);
  const decoded s = decode(b.stream(4));
  ASSERT_EQ(s.records.size(), 1u);
  EXPECT_EQ(s.records[0].header.code, op_code::message);
  EXPECT_EQ(s.records[0].header.address, 77u);
  EXPECT_EQ(s.records[0].header.count, 3u);
  EXPECT_EQ(s.records[0].payload, payload);
  EXPECT_EQ(b.queued_to_self(), 0u);
}

TEST_F(IsochronBuilder, QueuedToSelfCountsOnlyQueuedMessagesToThisNode) {
  isochron_builder b(0, kNodes, pages_);
  b.begin(0);
  const std::vector<std::byte> five(5), seven(7);
  ASSERT_TRUE(b.add_message(0, op_code::queued, 0, five).ok());
  ASSERT_TRUE(b.add_message(0, op_code::message, 0, seven).ok());
  ASSERT_TRUE(b.add_message(1, op_code::queued, 0, seven).ok());
  ASSERT_TRUE(b.add_message(0, op_code::queued, 0, seven).ok());
  EXPECT_EQ(b.queued_to_self(), 12u);
  b.begin(1);
  EXPECT_EQ(b.queued_to_self(), 0u);
}

TEST_F(IsochronBuilder, MessageToANodeOutsideTheJobIsInvalid) {
  isochron_builder b(0, kNodes, pages_);
  b.begin(0);
  const std::byte payload[1]{};
  EXPECT_EQ(b.add_message(5, op_code::message, 0, payload),
            absl::InvalidArgumentError("message to node 5: the job has nodes 0..4"));
  EXPECT_TRUE(b.empty());
}

TEST_F(IsochronBuilder, MessageAboveTheLimitIsOutOfRangeNamingBothSizes) {
  isochron_builder b(0, kNodes, pages_, {.message_bytes = 16});
  b.begin(0);
  const std::vector<std::byte> largest(16), larger(17);
  EXPECT_TRUE(b.add_message(2, op_code::message, 0, largest).ok());
  EXPECT_EQ(
      b.add_message(2, op_code::message, 0, larger),
      absl::OutOfRangeError("message of 17 bytes to node 2 exceeds the largest message, 16 bytes"));
  EXPECT_EQ(decode(b.stream(2)).records.size(), 1u);
}

TEST_F(IsochronBuilder, MessageOverTheRecordLimitIsResourceExhausted) {
  isochron_builder b(0, kNodes, pages_, {.record_bytes = 200});
  b.begin(0);
  const std::vector<std::byte> payload(200);
  const absl::Status s = b.add_message(1, op_code::message, 0, payload);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(s.message()), HasSubstr("a message of 200 bytes to node 1"));
  EXPECT_TRUE(b.empty());
  EXPECT_TRUE(b.reads_only());
  EXPECT_THAT(b.remote_destinations(), IsEmpty());
}

// One message to several nodes is one operation: the same index and payload in every
// destination's stream (this node's local part too).
TEST_F(IsochronBuilder, MessageToSeveralNodesIsOneOperationEverywhere) {
  isochron_builder b(0, kNodes, pages_);
  b.begin(3);
  const std::byte first[1]{};
  ASSERT_TRUE(b.add_message(2, op_code::message, 1, first).ok());
  const std::vector<std::byte> payload{std::byte{9}, std::byte{8}, std::byte{7}};
  const node_id to[] = {0, 1, 4};
  ASSERT_TRUE(b.add_message(to, op_code::message, 77, payload).ok());
  EXPECT_THAT(b.remote_destinations(), ElementsAre(1u, 2u, 4u));
  EXPECT_TRUE(b.has_local_part());
  for (const node_id n : to) {
    const decoded s = decode(b.stream(n));
    ASSERT_EQ(s.records.size(), 1u) << "node " << n;
    EXPECT_EQ(s.records[0].header.index, 1u) << "node " << n;
    EXPECT_EQ(s.records[0].header.address, 77u);
    EXPECT_EQ(s.records[0].payload, payload);
  }
}

// A message to several nodes that would outgrow the record adds to none of them.
TEST_F(IsochronBuilder, MessageToSeveralNodesOverTheRecordAddsNothing) {
  const std::vector<std::byte> payload(40);
  // Two remote parts of it fit; three do not.
  constexpr std::size_t kTwo =
      2 * (sizeof(stream_header) + sizeof(op_header) + 40 + isochron_builder::kPartOverhead);
  isochron_builder b(0, kNodes, pages_, {.record_bytes = kTwo});
  b.begin(0);
  const node_id two[] = {1, 2};
  EXPECT_TRUE(b.add_message(two, op_code::message, 0, payload).ok());
  b.begin(1);
  const node_id three[] = {1, 2, 3};
  const absl::Status s = b.add_message(three, op_code::message, 0, payload);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(s.message()), HasSubstr("a message of 40 bytes to 3 nodes"));
  EXPECT_TRUE(b.empty());
  EXPECT_THAT(b.remote_destinations(), IsEmpty());
  const node_id stranger[] = {1, 5};
  EXPECT_EQ(b.add_message(stranger, op_code::message, 0, payload).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(b.empty());
}

TEST_F(IsochronBuilder, GroupOperationGoesToEveryNode) {
  isochron_builder b(0, kNodes, pages_);
  b.begin(0);
  ASSERT_TRUE(b.add_group(op_code::signal, 3, 0, 0).ok());
  ASSERT_TRUE(b.add_group(op_code::barrier, 2, 1, 41).ok());
  EXPECT_FALSE(b.reads_only());
  EXPECT_TRUE(b.has_local_part());
  EXPECT_THAT(b.remote_destinations(), ElementsAre(1u, 2u, 3u, 4u));
  EXPECT_EQ(b.delta(), 6u);
  for (node_id n = 0; n < kNodes; ++n) {
    const decoded s = decode(b.stream(n));
    ASSERT_EQ(s.records.size(), 2u) << "node " << n;
    EXPECT_EQ(s.records[0].header.code, op_code::signal);
    EXPECT_EQ(s.records[0].header.address, 3u);
    EXPECT_EQ(s.records[0].header.index, 0u);
    EXPECT_EQ(s.records[1].header.code, op_code::barrier);
    EXPECT_EQ(s.records[1].header.address, 2u);
    EXPECT_EQ(s.records[1].header.width, 1u);  // the mode
    EXPECT_EQ(s.records[1].header.index, 1u);
    EXPECT_EQ(s.records[1].instance, 41u);
  }
}

TEST_F(IsochronBuilder, GroupOperationOverTheRecordLimitIsResourceExhausted) {
  isochron_builder b(0, kNodes, pages_, {.record_bytes = 256});
  b.begin(0);
  const absl::Status s = b.add_group(op_code::barrier, 0, 1, 0);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(s.message()), HasSubstr("barrier would make the isochron"));
  EXPECT_TRUE(b.empty());
  EXPECT_FALSE(b.has_local_part());
}

TEST_F(IsochronBuilder, TotalBytesIsEveryStreamTogether) {
  isochron_builder b(0, kNodes, pages_);
  b.begin(0);
  const std::vector<std::uint64_t> values(3, 9);
  ASSERT_TRUE(b.add(op_code::write, 8, shared_ + 7, 3, values, 0).ok());
  ASSERT_TRUE(b.add(op_code::read, 8, near_, 2, {}, 1).ok());
  std::size_t sum = 0;
  for (node_id n = 0; n < kNodes; ++n) sum += b.stream(n).size();
  EXPECT_EQ(b.total_bytes(), sum);
}

}  // namespace
}  // namespace iso::runtime
