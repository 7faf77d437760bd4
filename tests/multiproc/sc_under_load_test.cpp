// Run by isorun as 3 processes. Sequential consistency under load, across processes:
// variables on pages with every possible copyset (all 7 non-empty subsets of 3 nodes);
// nodes repeatedly write one value to all of them in one isochron, and every node reads
// all of them back in another, every round. Isochrons are atomic and totally ordered, so every read
// isochron must see a single value in every variable, whichever copy each read went to.
#include <gtest/gtest.h>

#include <deque>
#include <set>

#include "tests/support/job_test.hpp"
#include "tests/support/test_support.hpp"

namespace {

using iso::test::read_alone;

TEST(ScUnderLoad, EveryReadIsochronSeesOneValueAcrossAllCopysets) {
  iso::node& node = iso::test::job_node();
  ASSERT_EQ(node.count(), 3u) << "run with isorun -n 3";
  std::vector<iso::shared_array<std::int64_t>> arrays;
  for (std::uint32_t subset = 1; subset < 8; ++subset) {
    std::vector<iso::node_id> copyset;
    for (iso::node_id n = 0; n < 3; ++n) {
      if (subset & (1u << n)) copyset.push_back(n);
    }
    arrays.push_back(node.allocate<std::int64_t>(4, iso::placement::on(copyset)));
  }
  node.barrier();
  constexpr int kRounds = 400;
  // Read isochrons in flight before the oldest is checked. Small, so that rounds spread over
  // many pulses and other nodes' writes land between ours.
  constexpr int kWindow = 2;
  std::deque<std::vector<iso::value<std::int64_t>>> in_flight;
  std::set<std::int64_t> values_seen;
  int torn = 0;
  auto check_oldest = [&] {
    const std::int64_t first = in_flight.front()[0].get();
    for (const auto& v : in_flight.front()) {
      if (v.get() != first) ++torn;
    }
    values_seen.insert(first);
    in_flight.pop_front();
  };
  for (int round = 0; round < kRounds; ++round) {
    const std::int64_t value = std::int64_t{node.id()} * 1'000'000 + round + 1;
    // Nodes take turns writing, so that many read isochrons follow other nodes' writes
    // (a read right behind our own write in the same pulse would always see ours).
    if (round % 3 == static_cast<int>(node.id())) {
      iso::isochron iso(node);
      for (const auto& a : arrays) {
        for (std::size_t i = 0; i < a.size(); ++i) iso.write(a[i], value);
      }
    }
    {
      iso::isochron iso(node);
      std::vector<iso::value<std::int64_t>> reads;
      for (const auto& a : arrays) {
        for (std::size_t i = 0; i < a.size(); ++i) reads.push_back(iso.read(a[i]));
      }
      in_flight.push_back(std::move(reads));
    }
    if (in_flight.size() == kWindow) check_oldest();
  }
  while (!in_flight.empty()) check_oldest();
  EXPECT_EQ(torn, 0) << "read isochrons saw a mix of values";
  // Under load other nodes' writes interleave, so some reads must see them (this is what
  // makes the test exercise concurrency rather than one node alone).
  bool saw_other = false;
  for (std::int64_t v : values_seen) saw_other |= v / 1'000'000 != node.id();
  EXPECT_TRUE(saw_other);
  node.barrier();
}

// Same-host reads between processes: node 0 reads, straight from node 1's memory window,
// 256 variables that node 2 keeps rewriting with one value per isochron (a torn snapshot
// would mix two), and then reads y, which node 2 wrote before x, from its own copy: having
// seen x = i it must see y >= i. Node 2 writes until node 0 has read enough.
TEST(ScUnderLoad, SameHostReadsAreAtomicAndOrderedAcrossProcesses) {
  iso::node& node = iso::test::job_node();
  auto block = node.allocate<std::int64_t>(256, iso::placement::on(1));
  auto x = node.allocate<std::int64_t>(1, iso::placement::on(1))[0];
  auto y = node.allocate<std::int64_t>(1, iso::placement::on({0, 1}))[0];
  auto stop = node.allocate<std::int64_t>(1, iso::placement::on(2))[0];
  auto done = node.allocate<std::int64_t>(1, iso::placement::on(1))[0];
  node.barrier();
  int torn = 0;
  int stale = 0;
  if (node.id() == 2) {
    for (std::int64_t i = 1; read_alone(node, stop) == 0; ++i) {
      {
        iso::isochron iso(node);
        for (std::size_t k = 0; k < block.size(); ++k) iso.write(block[k], i);
      }
      {
        iso::isochron iso(node);
        iso.write(y, i);
      }
      iso::isochron iso(node);
      iso.write(x, i);
    }
  } else if (node.id() == 0) {
    const std::uint64_t served_before = node.status().direct_reads;
    for (int round = 0; round < 2000; ++round) {
      {
        iso::isochron iso(node);
        std::vector<iso::value<std::int64_t>> all;
        for (std::size_t k = 0; k < block.size(); ++k) all.push_back(iso.read(block[k]));
        iso.end();
        for (const auto& v : all) torn += v.get() != all[0].get() ? 1 : 0;
      }
      const std::int64_t seen_x = read_alone(node, x);
      stale += read_alone(node, y) < seen_x ? 1 : 0;
    }
    // Most of them, while node 2 was writing.
    EXPECT_GT(node.status().direct_reads, served_before + 1000);
    iso::isochron iso(node);
    iso.write(stop, std::int64_t{1});
    iso.write(done, std::int64_t{1});
  } else {
    while (read_alone(node, done) == 0) {
    }
  }
  EXPECT_EQ(torn, 0) << "a read isochron saw two of node 2's isochrons at once";
  EXPECT_EQ(stale, 0) << "a local read saw an older state than a same-host read before it";
  node.quiesce();
  node.barrier();
}

}  // namespace
