// Run by isorun as 3 processes: shared objects between real processes. Orca's Int (every
// node increments, node 0 awaits the total) replicated, as a single copy that migrates
// twice in the middle, and placed automatically, a job queue whose jobs
// are each taken exactly once, replicas left identical by concurrent writes, and an
// automatic object switching to replicas and back.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "tests/support/job_test.hpp"
#include "tests/support/object_types.hpp"

namespace {

using iso::object_placement;
namespace int_ops = iso::test::int_ops;
namespace queue_ops = iso::test::queue_ops;

// Every node's values, gathered at node 0 by plain messages and sorted there; elsewhere
// empty (a node sends its own and goes on).
std::vector<std::int64_t> gather_at_zero(iso::node& node, const std::vector<std::int64_t>& mine) {
  if (node.id() != 0) {
    node.send(0, std::as_bytes(std::span(mine)));
    return {};
  }
  std::vector<std::int64_t> all = mine;
  for (std::uint32_t i = 1; i < node.count(); ++i) {
    const iso::message m = node.receive();
    const std::size_t at = all.size();
    all.resize(at + m.bytes().size() / sizeof(std::int64_t));
    std::memcpy(all.data() + at, m.bytes().data(), m.bytes().size());
  }
  std::sort(all.begin(), all.end());
  return all;
}

TEST(ObjectJob, EveryNodeIncrementsAndNodeZeroAwaitsTheTotal) {
  iso::node& node = iso::test::job_node();
  const iso::object_type int_type = iso::test::make_int_type();
  constexpr std::int64_t kEach = 100;
  for (object_placement where :
       {object_placement::replicated, object_placement::single_copy, object_placement::automatic}) {
    iso::object total(node, int_type, {.placement = where, .owner = node.count() - 1});
    for (std::int64_t i = 0; i < kEach; ++i) {
      // The single copy moves twice in the middle of the run.
      if (where == object_placement::single_copy && i == kEach / 2 && node.id() < 2) {
        total.migrate(node.id());
      }
      total.call<std::int64_t>(int_ops::kInc, std::int64_t{1});
    }
    const auto all = static_cast<std::int64_t>(kEach * node.count());
    if (node.id() == 0) {
      EXPECT_EQ(total.read<std::int64_t>(int_ops::kAwait, all), all);
    }
    node.barrier();
  }
}

TEST(ObjectJob, JobQueueGivesEveryJobExactlyOnce) {
  iso::node& node = iso::test::job_node();
  const iso::object_type queue_type = iso::test::make_queue_type();
  constexpr std::int64_t kJobs = 300;
  for (object_placement where : {object_placement::replicated, object_placement::single_copy}) {
    iso::object queue(node, queue_type, {.placement = where, .owner = 0});
    if (node.id() == node.count() - 1) {
      for (std::int64_t j = 0; j < kJobs; ++j) queue.call<void>(queue_ops::kPut, j);
      queue.call<void>(queue_ops::kClose);
    }
    std::vector<std::int64_t> mine;
    for (std::int64_t job; (job = queue.call<std::int64_t>(queue_ops::kGet)) >= 0;) {
      mine.push_back(job);
    }
    const std::vector<std::int64_t> all = gather_at_zero(node, mine);
    if (node.id() == 0) {
      ASSERT_EQ(all.size(), static_cast<std::size_t>(kJobs));
      for (std::int64_t j = 0; j < kJobs; ++j) ASSERT_EQ(all[j], j);
    }
    node.barrier();
  }
}

TEST(ObjectJob, ConcurrentWritesLeaveIdenticalReplicas) {
  iso::node& node = iso::test::job_node();
  const iso::object_type int_type = iso::test::make_int_type();
  iso::object mixed(node, int_type, {.placement = object_placement::replicated});
  iso::object done(node, int_type, {.placement = object_placement::replicated});
  for (std::int64_t i = 0; i < 200; ++i) {
    mixed.call<std::int64_t>(int_ops::kMix, std::int64_t{node.id() * 1000 + i});
  }
  done.call<std::int64_t>(int_ops::kInc, std::int64_t{1});
  done.read<std::int64_t>(int_ops::kAwait, std::int64_t{node.count()});  // every write is here
  const std::vector<std::byte> mine = mixed.state_bytes();
  if (node.id() != 0) {
    node.send(0, mine);
  } else {
    for (std::uint32_t i = 1; i < node.count(); ++i) {
      const iso::message m = node.receive();
      EXPECT_TRUE(std::equal(mine.begin(), mine.end(), m.bytes().begin(), m.bytes().end()))
          << "node " << m.source() << "'s replica differs from node 0's";
    }
  }
  EXPECT_EQ(mixed.writes_applied(), 200u * node.count());
  node.barrier();
}

// Automatic placement between processes: a read-mostly phase replicates the object and a
// write-mostly phase returns it to one copy, at the same point everywhere; every increment
// lands once (the results of all incs are 1..total).
TEST(ObjectJob, AutomaticPlacementSwitchesBothWays) {
  iso::node& node = iso::test::job_node();
  const iso::object_type int_type = iso::test::make_int_type();
  constexpr int kCalls = 300;
  iso::object counter(node, int_type,
                      {.placement = object_placement::automatic, .owner = node.count() - 1});
  iso::object arrivals(node, int_type, {.placement = object_placement::replicated});
  const auto nodes = static_cast<std::int64_t>(node.count());
  std::vector<std::int64_t> incs;
  // Each node's earlier messages of the order are applied everywhere once every node's
  // increment of `arrivals` is.
  auto order_barrier = [&](std::int64_t round) {
    arrivals.call<std::int64_t>(int_ops::kInc, std::int64_t{1});
    arrivals.read<std::int64_t>(int_ops::kAwait, round * nodes);
  };
  for (int i = 0; i < kCalls; ++i) {
    if (i % 10 == 0) {
      incs.push_back(counter.call<std::int64_t>(int_ops::kInc, std::int64_t{1}));
    } else {
      EXPECT_GE(counter.read<std::int64_t>(int_ops::kValue), 0);
    }
  }
  order_barrier(1);
  EXPECT_EQ(counter.current_placement(), object_placement::replicated);
  node.barrier();  // no phase-2 write is ordered before every node looked
  for (int i = 0; i < kCalls; ++i) {
    if (i % 10 == 0) {
      EXPECT_GE(counter.read<std::int64_t>(int_ops::kValue), 0);
    } else {
      incs.push_back(counter.call<std::int64_t>(int_ops::kInc, std::int64_t{1}));
    }
  }
  order_barrier(2);
  EXPECT_EQ(counter.current_placement(), object_placement::single_copy);
  const std::vector<std::int64_t> all = gather_at_zero(node, incs);
  if (node.id() == 0) {
    ASSERT_EQ(all.size(), static_cast<std::size_t>(nodes * (kCalls / 10 + kCalls * 9 / 10)));
    for (std::size_t k = 0; k < all.size(); ++k) {
      ASSERT_EQ(all[k], static_cast<std::int64_t>(k + 1));
    }
    EXPECT_EQ(counter.read<std::int64_t>(int_ops::kValue), static_cast<std::int64_t>(all.size()));
  }
  node.barrier();
}

}  // namespace
