// Shared objects (iso/object.hpp) through real nodes of inproc jobs, under every placement
// and both objects orders:
// Orca's Int with inc() and a guarded await(), a job queue with a guarded get() and a
// replicated bound (every job taken exactly once, the program ends), identical replicas
// after concurrent order-sensitive writes, an identical resume order on every replica, and
// the same results as a one-node run.
#include "iso/object.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "iso/iso.hpp"
#include "tests/support/inproc_job.hpp"
#include "tests/support/object_test_params.hpp"
#include "tests/support/object_types.hpp"

namespace {

using iso::node_id;
using iso::object_placement;
using iso::test::run_inproc;
namespace int_ops = iso::test::int_ops;
namespace queue_ops = iso::test::queue_ops;

// Every case runs under every placement and both objects orders.
class Objects : public iso::test::placement_order_test {
 protected:
  // Single copies live on the last node, so that node 0 calls them remotely.
  [[nodiscard]] iso::object_options placed(node_id nodes) const {
    return {.placement = placement(), .owner = nodes - 1, .initial = {}};
  }
};

INSTANTIATE_TEST_SUITE_P(PlacementsAndOrders, Objects, iso::test::every_placement_and_order(),
                         iso::test::placement_order_name);

// Orca's example: every node increments, node 0 awaits the total.
TEST_P(Objects, EveryNodeIncrementsAndNodeZeroAwaitsTheTotal) {
  constexpr int kNodes = 3;
  constexpr std::int64_t kEach = 50;
  const iso::object_type int_type = iso::test::make_int_type();
  std::mutex mu;
  std::vector<std::int64_t> awaited(kNodes, -1);
  const int status = run_inproc(kNodes, opts(), [&](iso::node& node) {
    iso::object total(node, int_type, placed(node.count()));
    EXPECT_EQ(total.placement(), placement());
    EXPECT_EQ(total.type_name(), "Int");
    for (std::int64_t i = 0; i < kEach; ++i) {
      EXPECT_GT(total.call<std::int64_t>(int_ops::kInc, std::int64_t{1}), 0);
    }
    // Every node awaits (node 0 as Orca's main does; the others to check the guard too).
    const auto v = total.read<std::int64_t>(int_ops::kAwait, std::int64_t{kNodes * kEach});
    std::lock_guard lock(mu);
    awaited[node.id()] = v;
  });
  EXPECT_EQ(status, 0);
  for (std::int64_t v : awaited) EXPECT_EQ(v, kNodes * kEach);
}

// The owner serves calls while it waits for anything else (here a plain message), not only
// while it calls objects itself: node 0's calls complete while node 1 sits in receive().
TEST(ObjectsSingleCopy, TheOwnerServesWhileItWaitsForSomethingElse) {
  const iso::object_type int_type = iso::test::make_int_type();
  std::int64_t got = -1;
  const int status = run_inproc(2, iso::test::object_job_options(), [&](iso::node& node) {
    iso::object x(node, int_type, {.placement = object_placement::single_copy, .owner = 1});
    if (node.id() == 0) {
      for (int i = 0; i < 10; ++i) x.call<std::int64_t>(int_ops::kInc, std::int64_t{1});
      got = x.read<std::int64_t>(int_ops::kValue);
      const std::byte done{1};
      node.send(1, std::span(&done, 1));
    } else {
      (void)node.receive();
      EXPECT_EQ(x.writes_applied(), 10u);
    }
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(got, 10);
}

// An object created by one node after the start, handed to the others by message (as
// Orca's fork passes objects): they attach to it and use it like any other.
TEST_P(Objects, AnObjectCreatedByOneNodeIsHandedToTheOthers) {
  constexpr int kNodes = 3;
  const iso::object_type int_type = iso::test::make_int_type();
  std::mutex mu;
  std::vector<std::int64_t> seen(kNodes, -1);
  const int status = run_inproc(kNodes, opts(), [&](iso::node& node) {
    iso::register_object_type(node, int_type);
    iso::object before(node, int_type, placed(node.count()));  // collective ids stay apart
    std::int64_t got = 0;
    if (node.id() == 0) {
      std::vector<std::byte> initial(sizeof(std::int64_t));
      const std::int64_t start = 100;
      std::memcpy(initial.data(), &start, sizeof(start));
      iso::object made = iso::object::create(
          node, int_type, {.placement = placement(), .owner = 1, .initial = initial});
      EXPECT_NE(made.id(), before.id());
      const iso::object_id id = made.id();
      for (node_id n = 1; n < node.count(); ++n) node.send(n, std::as_bytes(std::span(&id, 1)));
      got = made.read<std::int64_t>(int_ops::kAwait, std::int64_t{100 + kNodes - 1});
    } else {
      const iso::message m = node.receive();
      iso::object_id id = 0;
      ASSERT_EQ(m.bytes().size(), sizeof(id));
      std::memcpy(&id, m.bytes().data(), sizeof(id));
      iso::object given = iso::object::attach(node, id);
      EXPECT_EQ(given.type_name(), "Int");
      got = given.call<std::int64_t>(int_ops::kInc, std::int64_t{1});
      EXPECT_GT(got, 100);
    }
    std::lock_guard lock(mu);
    seen[node.id()] = got;
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(seen[0], 100 + kNodes - 1);
}

// The TSP pattern: a job queue with a guarded get() and a global bound, workers on every
// node. Every job is taken exactly once, and every worker ends.
struct queue_run {
  std::multiset<std::int64_t> taken;
  std::int64_t bound = 0;
};

queue_run run_queue_program(int nodes, object_placement where, iso::order_kind order, int jobs) {
  const iso::object_type queue_type = iso::test::make_queue_type();
  const iso::object_type int_type = iso::test::make_int_type();
  std::mutex mu;
  queue_run out;
  const int status = run_inproc(nodes, iso::test::object_job_options(order), [&](iso::node& node) {
    const iso::object_options opts{.placement = where, .owner = node.count() - 1, .initial = {}};
    iso::object queue(node, queue_type, opts);
    // The bound is always replicated (read often, written rarely), as in Orca's TSP.
    std::vector<std::byte> start(sizeof(std::int64_t));
    const std::int64_t infinity = 1'000'000;
    std::memcpy(start.data(), &infinity, sizeof(infinity));
    iso::object bound(node, int_type,
                      {.placement = object_placement::replicated, .owner = 0, .initial = start});
    if (node.id() == 0) {
      for (std::int64_t j = 0; j < jobs; ++j) queue.call<void>(queue_ops::kPut, j * 7 + 3);
      queue.call<void>(queue_ops::kClose);
    }
    std::vector<std::int64_t> mine;
    for (;;) {
      const auto job = queue.call<std::int64_t>(queue_ops::kGet);
      if (job < 0) break;
      mine.push_back(job);
      // A job's "tour length": lower the bound when it is better (read locally first).
      const std::int64_t length = 100 + (job * 37) % 1000;
      if (length < bound.read<std::int64_t>(int_ops::kValue)) {
        bound.call<std::int64_t>(int_ops::kLower, length);
      }
    }
    node.barrier();
    // A write after the barrier takes its place in the order after every write made
    // before it anywhere (those had their numbers), so the replica has applied them all.
    bound.call<std::int64_t>(int_ops::kLower, infinity);
    const auto b = bound.read<std::int64_t>(int_ops::kValue);
    std::lock_guard lock(mu);
    out.taken.insert(mine.begin(), mine.end());
    if (node.id() == 0) out.bound = b;
  });
  EXPECT_EQ(status, 0);
  return out;
}

TEST_P(Objects, JobQueueGivesEveryJobExactlyOnceAndTheProgramEnds) {
  constexpr int kJobs = 120;
  const queue_run many = run_queue_program(3, placement(), order(), kJobs);
  ASSERT_EQ(many.taken.size(), static_cast<std::size_t>(kJobs));
  for (std::int64_t j = 0; j < kJobs; ++j) {
    EXPECT_EQ(many.taken.count(j * 7 + 3), 1u) << "job " << j;
  }
  // The same program on one node gives the same results.
  const queue_run one = run_queue_program(1, placement(), order(), kJobs);
  EXPECT_EQ(one.taken, many.taken);
  EXPECT_EQ(one.bound, many.bound);
  std::int64_t best = 1'000'000;
  for (std::int64_t j = 0; j < kJobs; ++j) best = std::min(best, 100 + ((j * 7 + 3) * 37) % 1000);
  EXPECT_EQ(many.bound, best);
}

// Concurrent order-sensitive writes from every node: every replica ends identical, under
// both objects orders, for every multicast tree shape (the sequencer order's messages travel
// along it; the isotach order's do not, so it runs one), with both NIC modes.
class ObjectsReplicated : public testing::TestWithParam<iso::order_kind> {};
INSTANTIATE_TEST_SUITE_P(Orders, ObjectsReplicated, iso::test::both_object_orders(),
                         [](const testing::TestParamInfo<iso::order_kind>& p) {
                           return iso::test::order_name(p.param);
                         });

TEST_P(ObjectsReplicated, ConcurrentWritesLeaveIdenticalReplicas) {
  constexpr int kNodes = 4;
  constexpr std::int64_t kEach = 40;
  const iso::object_type int_type = iso::test::make_int_type();
  const bool isotach = GetParam() == iso::order_kind::isotach;
  for (const char* shape : {"binary", "chain", "binomial"}) {
    if (isotach && std::string(shape) != "binary") continue;
    for (iso::nic_mode mode : {iso::nic_mode::thread, iso::nic_mode::inline_poll}) {
      const std::string where =
          std::string(shape) + (mode == iso::nic_mode::thread ? ", NIC thread" : ", NIC inline");
      iso::options o = iso::test::object_job_options(GetParam());
      o.multicast_tree = shape;
      o.nic = mode;
      std::mutex mu;
      std::map<node_id, std::vector<std::byte>> digests;
      std::map<node_id, std::uint64_t> applied;
      const int status = run_inproc(kNodes, o, [&](iso::node& node) {
        iso::object mixed(node, int_type, {.placement = object_placement::replicated});
        iso::object done(node, int_type, {.placement = object_placement::replicated});
        for (std::int64_t i = 0; i < kEach; ++i) {
          mixed.call<std::int64_t>(int_ops::kMix, std::int64_t{node.id() * 1000 + i});
        }
        // Ordered after this node's writes (one order, per-sender FIFO): once every node's
        // inc has been applied here, so has every write to `mixed`.
        done.call<std::int64_t>(int_ops::kInc, std::int64_t{1});
        done.read<std::int64_t>(int_ops::kAwait, std::int64_t{kNodes});
        std::lock_guard lock(mu);
        digests[node.id()] = mixed.state_bytes();
        applied[node.id()] = mixed.writes_applied();
      });
      ASSERT_EQ(status, 0) << where;
      for (const auto& [n, d] : digests) {
        EXPECT_EQ(d, digests[0]) << where << ": node " << n << "'s replica differs from node 0's";
        EXPECT_EQ(applied[n], static_cast<std::uint64_t>(kNodes * kEach)) << where;
      }
    }
  }
}

// Waiting gets resume at the same point of the order on every replica, in the same order.
TEST_P(ObjectsReplicated, ResumeOrderIsIdenticalOnEveryReplica) {
  constexpr int kNodes = 4;
  const iso::object_type queue_type = iso::test::make_queue_type();
  std::mutex mu;
  std::map<node_id, std::vector<iso::resumed_call>> logs;
  const int status =
      run_inproc(kNodes, iso::test::object_job_options(GetParam()), [&](iso::node& node) {
        iso::object queue(node, queue_type, {.placement = object_placement::replicated});
        if (node.id() == 0) {
          // Every other node's get waits in the queue before the first put is ordered.
          while (queue.waiting_calls() < static_cast<std::size_t>(kNodes - 1)) {
            (void)node.try_receive();
          }
          for (std::int64_t j = 0; j < 3 * (kNodes - 1); ++j) queue.call<void>(queue_ops::kPut, j);
          queue.call<void>(queue_ops::kClose);
        }
        while (node.id() != 0 && queue.call<std::int64_t>(queue_ops::kGet) >= 0) {
        }
        // Every replica has applied close() by now (node 0 made it, every other node's last get
        // came after it), and nothing resumes after close().
        std::lock_guard lock(mu);
        logs[node.id()] = queue.resume_log();
      });
  ASSERT_EQ(status, 0);
  ASSERT_GE(logs[0].size(), static_cast<std::size_t>(kNodes - 1));
  std::vector<node_id> callers;
  for (const iso::resumed_call& r : logs[0]) callers.push_back(r.caller);
  for (node_id n = 1; n < kNodes; ++n) {
    EXPECT_NE(std::find(callers.begin(), callers.end(), n), callers.end())
        << "node " << n << "'s waiting get never resumed";
  }
  for (const auto& [n, log] : logs) {
    EXPECT_EQ(log, logs[0]) << "node " << n << " resumed calls in another order";
  }
}

// Migrations are messages of the objects order: every case runs under both orders.
class ObjectsMigration : public testing::TestWithParam<iso::order_kind> {};
INSTANTIATE_TEST_SUITE_P(Orders, ObjectsMigration, iso::test::both_object_orders(),
                         [](const testing::TestParamInfo<iso::order_kind>& p) {
                           return iso::test::order_name(p.param);
                         });

// A single copy that moves in the middle of the run: every increment lands once, and
// every node sees the total, wherever the copy is.
TEST_P(ObjectsMigration, IncrementsSurviveMovesInTheMiddleOfTheRun) {
  constexpr int kNodes = 3;
  constexpr std::int64_t kEach = 60;
  const iso::object_type int_type = iso::test::make_int_type();
  std::mutex mu;
  std::vector<std::int64_t> seen(kNodes, -1);
  const int status =
      run_inproc(kNodes, iso::test::object_job_options(GetParam()), [&](iso::node& node) {
        iso::object total(node, int_type, {.placement = object_placement::single_copy, .owner = 2});
        for (std::int64_t i = 0; i < kEach; ++i) {
          if (i == kEach / 2 && node.id() < 2) total.migrate(node.id());
          total.call<std::int64_t>(int_ops::kInc, std::int64_t{1});
        }
        const auto v = total.read<std::int64_t>(int_ops::kAwait, std::int64_t{kNodes * kEach});
        std::lock_guard lock(mu);
        seen[node.id()] = v;
      });
  EXPECT_EQ(status, 0);
  for (std::int64_t v : seen) EXPECT_EQ(v, kNodes * kEach);
}

// Calls waiting in the queue move with the copy, and resume at the new owner.
TEST_P(ObjectsMigration, WaitingCallsMoveWithTheCopy) {
  constexpr int kNodes = 3;
  constexpr std::int64_t kJobs = 40;
  const iso::object_type queue_type = iso::test::make_queue_type();
  std::mutex mu;
  std::multiset<std::int64_t> taken;
  const int status =
      run_inproc(kNodes, iso::test::object_job_options(GetParam()), [&](iso::node& node) {
        iso::object queue(node, queue_type,
                          {.placement = object_placement::single_copy, .owner = 0});
        std::vector<std::int64_t> mine;
        if (node.id() == 0) {
          // The others' gets wait in the queue here before it moves to node 1.
          while (queue.waiting_calls() < static_cast<std::size_t>(kNodes - 1)) {
            (void)node.try_receive();
          }
          queue.migrate(1);
          EXPECT_EQ(queue.waiting_calls(), 0u) << "the waiting calls stayed behind";
          for (std::int64_t j = 0; j < kJobs; ++j) queue.call<void>(queue_ops::kPut, j);
          queue.migrate(2);
          queue.call<void>(queue_ops::kClose);
        }
        for (std::int64_t job; (job = queue.call<std::int64_t>(queue_ops::kGet)) >= 0;) {
          mine.push_back(job);
        }
        std::lock_guard lock(mu);
        taken.insert(mine.begin(), mine.end());
      });
  EXPECT_EQ(status, 0);
  ASSERT_EQ(taken.size(), static_cast<std::size_t>(kJobs));
  for (std::int64_t j = 0; j < kJobs; ++j) EXPECT_EQ(taken.count(j), 1u) << "job " << j;
}

// Automatic placement: a copy placed on node 0 but used only by node 1 moves to node 1,
// and the results are those of any other placement.
TEST_P(ObjectsMigration, AnAutomaticCopyMovesToItsHeaviestUser) {
  const iso::object_type int_type = iso::test::make_int_type();
  constexpr std::int64_t kCalls = 200;
  std::mutex mu;
  std::vector<std::int64_t> seen(2, -1);
  std::vector<node_id> owner_seen(2, 99);
  const int status = run_inproc(2, iso::test::object_job_options(GetParam()), [&](iso::node& node) {
    iso::object total(node, int_type, {.placement = object_placement::automatic, .owner = 0});
    EXPECT_EQ(total.placement(), object_placement::automatic);
    EXPECT_EQ(total.owner(), 0u);
    std::int64_t v = 0;
    if (node.id() == 1) {
      for (std::int64_t i = 0; i < kCalls; ++i) {
        v = total.call<std::int64_t>(int_ops::kInc, std::int64_t{1});
      }
      EXPECT_EQ(v, kCalls);
    } else {
      v = total.read<std::int64_t>(int_ops::kAwait, kCalls);
    }
    node.barrier();
    std::lock_guard lock(mu);
    seen[node.id()] = v;
    owner_seen[node.id()] = total.owner();
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(seen[0], kCalls);
  EXPECT_EQ(seen[1], kCalls);
  EXPECT_EQ(owner_seen[0], 1u) << "the copy stayed on node 0";
  EXPECT_EQ(owner_seen[1], 1u);
}

TEST_P(ObjectsMigration, OnlySingleCopiesMoveAndOnlyToNodesOfTheJob) {
  const iso::object_type int_type = iso::test::make_int_type();
  const int status = run_inproc(2, iso::test::object_job_options(GetParam()), [&](iso::node& node) {
    iso::object r(node, int_type, {.placement = object_placement::replicated});
    iso::object s(node, int_type, {.placement = object_placement::single_copy, .owner = 0});
    try {
      r.migrate(1);
      ADD_FAILURE() << "a replicated object moved";
    } catch (const iso::error& e) {
      EXPECT_EQ(e.code(), iso::error_code::failed_precondition);
      EXPECT_NE(std::string(e.what()).find("object 0 (Int): it is replicated"), std::string::npos)
          << e.what();
    }
    try {
      s.migrate(5);
      ADD_FAILURE() << "moved to a node outside the job";
    } catch (const iso::error& e) {
      EXPECT_EQ(e.code(), iso::error_code::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("node 5 is not a node of the job"), std::string::npos)
          << e.what();
    }
  });
  EXPECT_EQ(status, 0);
}

}  // namespace
