// Automatic placement switching between a single copy and replicas (iso/object.hpp,
// object_placement::automatic): a read-mostly phase makes the object replicated and a
// write-mostly phase makes it a single copy again, seen through current_placement(); every
// increment lands exactly once and the final state equals a one-node run; many outstanding
// calls cross a switch; the guarded job queue keeps giving every job exactly once while it
// switches. On 2 and 3 nodes, with both NIC modes.
#include <gtest/gtest.h>

#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "iso/iso.hpp"
#include "iso/object.hpp"
#include "runtime/objects/object_table.hpp"
#include "tests/support/inproc_job.hpp"
#include "tests/support/object_test_params.hpp"
#include "tests/support/object_types.hpp"

namespace {

using iso::node_id;
using iso::object_placement;
using iso::test::run_inproc;
namespace int_ops = iso::test::int_ops;
namespace queue_ops = iso::test::queue_ops;

using auto_params = std::tuple<int, iso::nic_mode, iso::order_kind>;

class AutoPlacement : public testing::TestWithParam<auto_params> {
 protected:
  [[nodiscard]] static int nodes() { return std::get<0>(GetParam()); }
  [[nodiscard]] static iso::options job_options() {
    iso::options o = iso::test::object_job_options(std::get<2>(GetParam()));
    o.nic = std::get<1>(GetParam());
    return o;
  }
};

std::string param_name(const testing::TestParamInfo<auto_params>& p) {
  return std::to_string(std::get<0>(p.param)) + "_nodes_" +
         (std::get<1>(p.param) == iso::nic_mode::thread ? "thread" : "inline") + "_" +
         iso::test::order_name(std::get<2>(p.param));
}

INSTANTIATE_TEST_SUITE_P(NodesNicModesAndOrders, AutoPlacement,
                         testing::Combine(testing::Values(2, 3),
                                          testing::Values(iso::nic_mode::thread,
                                                          iso::nic_mode::inline_poll),
                                          iso::test::both_object_orders()),
                         param_name);

// Waits until every node has applied everything each node did before it arrived here: an
// increment of a replicated counter is ordered after each node's earlier messages of the
// order, and awaiting the count takes every node's.
void order_barrier(iso::object& arrivals, std::int64_t round, int nodes) {
  arrivals.call<std::int64_t>(int_ops::kInc, std::int64_t{1});
  arrivals.read<std::int64_t>(int_ops::kAwait, std::int64_t{round * nodes});
}

struct phases_run {
  std::multiset<std::int64_t> increments;  // what every inc returned, over the job
  std::int64_t total = 0;
  std::vector<object_placement> after_reads;
  std::vector<object_placement> after_writes;
};

// Phase 1: mostly reads (one inc per ten calls); phase 2: mostly writes (one read per ten).
phases_run run_phases(int nodes, const iso::options& opts) {
  constexpr int kCalls = 300;
  const iso::object_type int_type = iso::test::make_int_type();
  std::mutex mu;
  phases_run out;
  out.after_reads.assign(nodes, object_placement::automatic);
  out.after_writes.assign(nodes, object_placement::automatic);
  const int status = run_inproc(nodes, opts, [&](iso::node& node) {
    iso::object counter(node, int_type,
                        {.placement = object_placement::automatic, .owner = node.count() - 1});
    iso::object arrivals(node, int_type, {.placement = object_placement::replicated});
    EXPECT_EQ(counter.current_placement(), object_placement::single_copy);
    std::vector<std::int64_t> mine;
    for (int i = 0; i < kCalls; ++i) {
      if (i % 10 == 0) {
        mine.push_back(counter.call<std::int64_t>(int_ops::kInc, std::int64_t{1}));
      } else {
        EXPECT_GE(counter.read<std::int64_t>(int_ops::kValue), 0);
      }
    }
    order_barrier(arrivals, 1, nodes);
    const object_placement after_reads = counter.current_placement();
    node.barrier();  // no node's phase-2 write reaches the order before every node looked
    for (int i = 0; i < kCalls; ++i) {
      if (i % 10 == 0) {
        EXPECT_GE(counter.read<std::int64_t>(int_ops::kValue), 0);
      } else {
        mine.push_back(counter.call<std::int64_t>(int_ops::kInc, std::int64_t{1}));
      }
    }
    order_barrier(arrivals, 2, nodes);
    const object_placement after_writes = counter.current_placement();
    const std::int64_t total = counter.read<std::int64_t>(int_ops::kValue);
    std::lock_guard lock(mu);
    out.increments.insert(mine.begin(), mine.end());
    out.after_reads[node.id()] = after_reads;
    out.after_writes[node.id()] = after_writes;
    if (node.id() == 0) out.total = total;
  });
  EXPECT_EQ(status, 0);
  return out;
}

TEST_P(AutoPlacement, ReadMostlyReplicatesAndWriteMostlyReturnsToOneCopy) {
  const phases_run many = run_phases(nodes(), job_options());
  for (int n = 0; n < nodes(); ++n) {
    EXPECT_EQ(many.after_reads[n], object_placement::replicated)
        << "node " << n << ": the read-mostly phase left a single copy";
    EXPECT_EQ(many.after_writes[n], object_placement::single_copy)
        << "node " << n << ": the write-mostly phase left it replicated";
  }
  // Every increment applied once: the results are 1..total, each once.
  ASSERT_EQ(many.increments.size(), static_cast<std::size_t>(many.total));
  std::int64_t expect = 1;
  for (std::int64_t v : many.increments) EXPECT_EQ(v, expect++);
  // As a one-node run of the same per-node program, times the nodes.
  const phases_run one = run_phases(1, job_options());
  EXPECT_EQ(many.total, one.total * nodes());
}

// A hint that reads dominate starts the object replicated (both ways of creating it); the
// writes then make it a single copy, and every increment lands once.
TEST_P(AutoPlacement, AHintOfManyReadsStartsReplicated) {
  constexpr int kIncs = 100;
  const iso::object_type int_type = iso::test::make_int_type();
  std::mutex mu;
  std::vector<object_placement> at_start;
  std::vector<object_placement> at_end;
  std::int64_t total = -1;
  const int status = run_inproc(nodes(), job_options(), [&](iso::node& node) {
    iso::register_object_type(node, int_type);
    const iso::object_options hinted{.placement = object_placement::automatic,
                                     .owner = node.count() - 1,
                                     .initial = {},
                                     .reads_per_write = 10};
    iso::object collective(node, int_type, hinted);
    iso::object arrivals(node, int_type, {.placement = object_placement::replicated});
    iso::object made = node.id() == 0
                           ? iso::object::create(node, int_type, hinted)
                           : iso::object::attach(node, iso::runtime::object_table::kOrderedIds);
    std::vector<object_placement> start = {collective.current_placement(),
                                           made.current_placement()};
    // Every node looks before any node writes: another node's writes could switch it first.
    order_barrier(arrivals, 1, static_cast<int>(node.count()));
    for (int i = 0; i < kIncs; ++i) collective.call<std::int64_t>(int_ops::kInc, std::int64_t{1});
    order_barrier(arrivals, 2, static_cast<int>(node.count()));
    const object_placement end = collective.current_placement();
    const auto v = collective.read<std::int64_t>(int_ops::kValue);
    std::lock_guard lock(mu);
    at_start.insert(at_start.end(), start.begin(), start.end());
    at_end.push_back(end);
    if (node.id() == 0) total = v;
  });
  EXPECT_EQ(status, 0);
  for (object_placement p : at_start) EXPECT_EQ(p, object_placement::replicated);
  for (object_placement p : at_end) EXPECT_EQ(p, object_placement::single_copy);
  EXPECT_EQ(total, kIncs * nodes());
}

// Many calls outstanding from every node (non-blocking starts) while the object switches
// both ways: each is answered once, and each increment is applied once.
TEST_P(AutoPlacement, OutstandingCallsCrossTheSwitches) {
  constexpr int kRounds = 12;
  constexpr int kBatch = 24;
  const iso::object_type int_type = iso::test::make_int_type();
  std::mutex mu;
  std::multiset<std::int64_t> increments;
  std::set<object_placement> seen;
  std::int64_t total = -1;
  const int status = run_inproc(nodes(), job_options(), [&](iso::node& node) {
    iso::object counter(node, int_type,
                        {.placement = object_placement::automatic, .owner = node.count() - 1});
    iso::object arrivals(node, int_type, {.placement = object_placement::replicated});
    std::vector<std::int64_t> mine;
    std::set<object_placement> here;
    for (int round = 0; round < kRounds; ++round) {
      // Read-heavy rounds, then write-heavy ones.
      const bool reads = round < kRounds / 2;
      std::vector<iso::pending<std::int64_t>> incs;
      std::vector<iso::pending<std::int64_t>> values;
      for (int i = 0; i < kBatch; ++i) {
        if ((i % 8 == 0) == reads) {
          incs.push_back(counter.start<std::int64_t>(int_ops::kInc, std::int64_t{1}));
        } else {
          values.push_back(counter.start<std::int64_t>(int_ops::kValue));
        }
      }
      for (auto& c : incs) mine.push_back(c.get());
      for (auto& c : values) EXPECT_GE(c.get(), 0);
      here.insert(counter.current_placement());
    }
    order_barrier(arrivals, 1, static_cast<int>(node.count()));
    const std::int64_t v = counter.read<std::int64_t>(int_ops::kValue);
    std::lock_guard lock(mu);
    increments.insert(mine.begin(), mine.end());
    seen.insert(here.begin(), here.end());
    if (node.id() == 0) total = v;
  });
  EXPECT_EQ(status, 0);
  ASSERT_EQ(increments.size(), static_cast<std::size_t>(total));
  std::int64_t expect = 1;
  for (std::int64_t v : increments) EXPECT_EQ(v, expect++);
  EXPECT_TRUE(seen.contains(object_placement::replicated)) << "it never became replicated";
  EXPECT_TRUE(seen.contains(object_placement::single_copy)) << "it never returned to one copy";
}

// The TSP job queue under automatic placement: the workers' reads of its size make it
// replicated while their gets wait; node 0's puts make it a single copy again. Every job is
// taken exactly once and every worker ends, as in a one-node run.
std::multiset<std::int64_t> run_switching_queue(int nodes, const iso::options& opts, int jobs,
                                                std::set<object_placement>* seen) {
  const iso::object_type queue_type = iso::test::make_queue_type();
  std::mutex mu;
  std::multiset<std::int64_t> taken;
  const int status = run_inproc(nodes, opts, [&](iso::node& node) {
    iso::object queue(node, queue_type,
                      {.placement = object_placement::automatic, .owner = node.count() - 1});
    std::set<object_placement> here;
    for (int i = 0; i < 200; ++i) {
      EXPECT_GE(queue.read<std::int64_t>(queue_ops::kSize), 0);  // node 0 may have begun
    }
    here.insert(queue.current_placement());
    if (node.id() == 0) {
      for (std::int64_t j = 0; j < jobs; ++j) {
        queue.call<void>(queue_ops::kPut, j);
        here.insert(queue.current_placement());
      }
      queue.call<void>(queue_ops::kClose);
    }
    std::vector<std::int64_t> mine;
    for (std::int64_t job; (job = queue.call<std::int64_t>(queue_ops::kGet)) >= 0;) {
      mine.push_back(job);
      here.insert(queue.current_placement());
    }
    std::lock_guard lock(mu);
    taken.insert(mine.begin(), mine.end());
    if (seen != nullptr && node.id() == 0) *seen = here;
  });
  EXPECT_EQ(status, 0);
  return taken;
}

TEST_P(AutoPlacement, GuardedJobQueueGivesEveryJobOnceWhileItSwitches) {
  constexpr int kJobs = 150;
  std::set<object_placement> seen;
  const std::multiset<std::int64_t> many =
      run_switching_queue(nodes(), job_options(), kJobs, &seen);
  ASSERT_EQ(many.size(), static_cast<std::size_t>(kJobs));
  for (std::int64_t j = 0; j < kJobs; ++j) EXPECT_EQ(many.count(j), 1u) << "job " << j;
  EXPECT_TRUE(seen.contains(object_placement::replicated)) << "node 0 never saw replicas";
  EXPECT_TRUE(seen.contains(object_placement::single_copy)) << "node 0 never saw one copy";
  EXPECT_EQ(run_switching_queue(1, job_options(), kJobs, nullptr), many);
}

}  // namespace
