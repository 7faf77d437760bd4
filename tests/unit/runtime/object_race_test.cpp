// Point-to-point object traffic racing the job-wide order: a call, or a migrating copy,
// that reaches a node before that node has applied the ordered message (a creation, a
// migration, a switch to replicas) its sender had already applied. The node keeps it until
// it catches up; it never answers that the object does not exist, fails, or loses a copy.
// (A creation that never comes is kept for at most the call deadline:
// object_before_creation_test.)
//
// Most cases play the objects order themselves (tests/support/played_order.hpp), to apply a
// message late on one node whatever the timing.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "iso/iso.hpp"
#include "iso/object.hpp"
#include "runtime/node_state.hpp"
#include "runtime/objects/object_table.hpp"
#include "tests/support/inproc_job.hpp"
#include "tests/support/object_test_params.hpp"
#include "tests/support/object_types.hpp"
#include "tests/support/played_order.hpp"
#include "tests/support/value_messages.hpp"

namespace {

using iso::node_id;
using iso::object_placement;
using iso::test::run_inproc;
namespace int_ops = iso::test::int_ops;

class ObjectRaces : public iso::test::order_nic_test {};

INSTANTIATE_TEST_SUITE_P(OrdersAndNics, ObjectRaces, iso::test::both_orders_and_nics(),
                         iso::test::order_nic_name);

using iso::test::receive_value;
using iso::test::send_value;

using iso::test::creation;
using iso::test::kFirstOrdered;
using iso::test::migration;
using iso::test::played_order;
using iso::test::replication;

// Node 0 applies the creation of a single copy owned by node 1 and calls it at once; node
// 1 serves that call before it applies the creation (it was refused as an unknown object).
TEST_P(ObjectRaces, ACallThatReachesTheOwnerBeforeTheCreationRunsOnceItIsApplied) {
  const iso::order_kind order = std::get<0>(GetParam());
  std::int64_t got = -1;
  std::string failure;
  const int status = run_inproc(2, opts(), [&](iso::node& node) {
    played_order played(node);
    if (node.id() == 0) {
      played.deliver(creation(object_placement::single_copy, 1, order));
      iso::object x = iso::object::attach(node, kFirstOrdered);
      auto call = x.start<std::int64_t>(int_ops::kInc, std::int64_t{1});  // sent at once
      send_value(node, 1, 1);  // behind the call: node 1 serves it while receiving this
      try {
        got = call.get();
      } catch (const iso::error& e) {
        failure = e.what();
      }
      send_value(node, 1, 2);
    } else {
      EXPECT_EQ(receive_value<int>(node), 1);
      played.deliver(creation(object_placement::single_copy, 1, order));
      iso::object x = iso::object::attach(node, kFirstOrdered);
      EXPECT_EQ(receive_value<int>(node), 2);
      EXPECT_EQ(x.writes_applied(), 1U);
    }
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(failure, "");
  EXPECT_EQ(got, 1);
}

// The owner never applies the creation (its order is stuck): it keeps the call for the call
// deadline, then answers it with an error naming the object and keeps nothing, instead of
// keeping it for ever (the caller once waited for ever too).
TEST_P(ObjectRaces, ACallForACreationTheOwnerNeverAppliesEndsAtTheDeadline) {
  const iso::order_kind order = std::get<0>(GetParam());
  iso::options o = opts();
  o.object_call_timeout = std::chrono::milliseconds(300);
  std::string failure = "the call returned";
  iso::error_code code = iso::error_code::unknown;
  const int status = run_inproc(2, o, [&](iso::node& node) {
    played_order played(node);
    if (node.id() == 0) {
      played.deliver(creation(object_placement::single_copy, 1, order));
      iso::object x = iso::object::attach(node, kFirstOrdered);
      try {
        (void)x.call<std::int64_t>(int_ops::kInc, std::int64_t{1});
      } catch (const iso::error& e) {
        code = e.code();
        failure = e.what();
      }
      send_value(node, 1, 1);
    } else {
      EXPECT_EQ(receive_value<int>(node), 1);  // serves (and keeps) the call meanwhile
      EXPECT_EQ(iso::detail::node_state::of(node).objects().parked_before_creation(), 0U);
    }
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(code, iso::error_code::deadline_exceeded) << failure;
  const std::string expected = "object " + std::to_string(kFirstOrdered) +
                               ", operation 0, called from node 0: node 1 did not apply the "
                               "object's creation within 300ms";
  EXPECT_NE(failure.find(expected), std::string::npos) << failure;
}

// Nodes 0 and 1 apply a creation on node 1 and its migration to node 2; node 1 ships the
// copy, which reaches node 2 before node 2 has applied either (it failed the node, as a
// copy of an unknown object). Node 2 installs it once it catches up, and serves calls.
TEST_P(ObjectRaces, ACopyThatArrivesBeforeTheCreationIsInstalledOnceItIsApplied) {
  const iso::order_kind order = std::get<0>(GetParam());
  std::int64_t got = -1;
  const int status = run_inproc(3, opts(), [&](iso::node& node) {
    played_order played(node);
    auto apply_both = [&] {
      played.deliver(creation(object_placement::single_copy, 1, order));
      played.deliver(migration(kFirstOrdered, 2));
      return iso::object::attach(node, kFirstOrdered);  // both apply in one round
    };
    if (node.id() == 1) {
      iso::object x = apply_both();  // ships the copy to node 2
      send_value(node, 2, 1);        // behind the copy
      EXPECT_EQ(receive_value<int>(node), 3);
    } else if (node.id() == 2) {
      EXPECT_EQ(receive_value<int>(node), 1);  // the copy arrived meanwhile
      iso::object x = apply_both();
      send_value(node, 0, 2);
      EXPECT_EQ(receive_value<int>(node), 3);
      EXPECT_EQ(x.writes_applied(), 1U);
    } else {
      iso::object x = apply_both();
      EXPECT_EQ(receive_value<int>(node), 2);
      got = x.call<std::int64_t>(int_ops::kInc, std::int64_t{1});
      send_value(node, 1, 3);
      send_value(node, 2, 3);
    }
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(got, 1);
}

// The same for the replicas of an automatic object: its owner ships one to each node when
// it becomes replicated, and node 2's arrives before node 2 has applied the creation.
TEST_P(ObjectRaces, AReplicaThatArrivesBeforeTheCreationIsInstalledOnceItIsApplied) {
  const iso::order_kind order = std::get<0>(GetParam());
  std::vector<std::int64_t> seen(3, -1);
  const int status = run_inproc(3, opts(), [&](iso::node& node) {
    played_order played(node);
    auto apply_both = [&] {
      played.deliver(creation(object_placement::automatic, 1, order));
      played.deliver(replication(kFirstOrdered));
      return iso::object::attach(node, kFirstOrdered);
    };
    if (node.id() == 1) {
      iso::object x = apply_both();  // ships the replicas
      send_value(node, 0, 1);
      send_value(node, 2, 1);
      seen[1] = x.read<std::int64_t>(int_ops::kValue);
    } else {
      EXPECT_EQ(receive_value<int>(node), 1);  // node 2: its replica arrived meanwhile
      iso::object x = apply_both();
      EXPECT_EQ(x.current_placement(), object_placement::replicated);
      seen[node.id()] = x.read<std::int64_t>(int_ops::kValue);
    }
    node.barrier();
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(seen, (std::vector<std::int64_t>{0, 0, 0}));
}

using iso::test::increment;

// The number of ordered writes after which automatic placement decides again.
constexpr int kSwitchWindow = 64;

// Node 2 lags behind the order while an automatic object becomes replicated (node 1 ships
// it a replica), a single copy on node 0 again (writes dominate), then moves to node 2
// (node 0 ships it the copy): both copies are there before node 2 applies any of it, and
// it installs each at its move (the second took the place of the first, and node 2 never
// got the copy it owns).
TEST_P(ObjectRaces, TwoCopiesThatArriveBeforeTheirMovesAreInstalledEachAtItsMove) {
  const iso::order_kind order = std::get<0>(GetParam());
  std::vector<std::int64_t> seen(3, -1);
  const int status = run_inproc(3, opts(), [&](iso::node& node) {
    played_order played(node);
    iso::runtime::object_table& table = iso::detail::node_state::of(node).objects();
    auto apply_all = [&] {
      played.deliver(creation(object_placement::automatic, 1, order));
      played.deliver(replication(kFirstOrdered));
      for (int i = 0; i < kSwitchWindow; ++i) played.deliver(increment(kFirstOrdered, 1));
      played.deliver(migration(kFirstOrdered, 2));
      return iso::object::attach(node, kFirstOrdered);
    };
    // Rounds until this node has applied every move (node 0 and 2 wait for a copy first)
    // and node 2 holds the copy; after 30 s (it takes milliseconds) the node fails, ending
    // the job, so that the four cases fail within the test's timeout.
    auto until_owned_by_2 = [&](iso::object& x) {
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (x.current_placement() != object_placement::single_copy ||
             *table.owner_of(kFirstOrdered) != 2 ||
             (node.id() == 2 && !table.state_bytes(kFirstOrdered).ok())) {
        if (std::chrono::steady_clock::now() > give_up) {
          throw std::runtime_error("the object never became node 2's single copy");
        }
        (void)node.try_receive();
      }
    };
    if (node.id() == 1) {
      iso::object x = apply_all();  // ships the replicas
      send_value(node, 2, 1);       // behind node 2's replica
      EXPECT_EQ(receive_value<int>(node), 4);
    } else if (node.id() == 0) {
      iso::object x = apply_all();
      until_owned_by_2(x);     // its replica came; it was the copy, and it shipped it on
      send_value(node, 2, 1);  // behind the copy
      EXPECT_EQ(receive_value<int>(node), 3);
      seen[0] = x.read<std::int64_t>(int_ops::kValue);  // from node 2
      send_value(node, 1, 4);
      send_value(node, 2, 4);
    } else {
      EXPECT_EQ(receive_value<int>(node), 1);
      EXPECT_EQ(receive_value<int>(node), 1);  // both copies arrived meanwhile
      iso::object x = apply_all();
      until_owned_by_2(x);
      seen[2] = x.read<std::int64_t>(int_ops::kValue);  // its own copy
      send_value(node, 0, 3);
      EXPECT_EQ(receive_value<int>(node), 4);
    }
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(seen[0], kSwitchWindow);
  EXPECT_EQ(seen[2], kSwitchWindow);
}

// Node 0 ships the copy to node 1 (move 1); node 1 has applied move 2 (to node 2)
// and the switch to replicas (move 3) before it arrives, so it relays the copy with epoch 3.
// Node 2 gets that relay before it applies anything, owns the object at move 2 and must
// ship the replicas at move 3.
TEST_P(ObjectRaces, ACopyRelayedToALaggingOwnerAtTheSwitchIsInstalledThere) {
  const iso::order_kind order = std::get<0>(GetParam());
  const int status = run_inproc(3, opts(), [&](iso::node& node) {
    played_order played(node);
    iso::runtime::object_table& table = iso::detail::node_state::of(node).objects();
    auto apply_all = [&] {
      played.deliver(creation(object_placement::automatic, 0, order));
      played.deliver(migration(kFirstOrdered, 1));
      played.deliver(migration(kFirstOrdered, 2));
      played.deliver(replication(kFirstOrdered));
      return iso::object::attach(node, kFirstOrdered);
    };
    auto until_replica = [&] {
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!table.state_bytes(kFirstOrdered).ok()) {
        if (std::chrono::steady_clock::now() > give_up) {
          throw std::runtime_error("node " + std::to_string(node.id()) + " never got its copy");
        }
        (void)node.try_receive();
      }
    };
    if (node.id() == 0) {
      played.deliver(creation(object_placement::automatic, 0, order));
      played.deliver(migration(kFirstOrdered, 1));
      (void)iso::object::attach(node, kFirstOrdered);  // ships the copy to node 1
      send_value(node, 1, 1);
      played.deliver(migration(kFirstOrdered, 2));
      played.deliver(replication(kFirstOrdered));
      until_replica();
    } else if (node.id() == 1) {
      iso::object x = apply_all();
      EXPECT_EQ(receive_value<int>(node), 1);  // the copy came: relayed to node 2
      send_value(node, 2, 1);
      until_replica();
    } else {
      EXPECT_EQ(receive_value<int>(node), 1);  // the relayed copy came meanwhile
      iso::object x = apply_all();
      until_replica();
    }
    node.barrier();
  });
  EXPECT_EQ(status, 0);
}

// Node 0 creates many single copies owned by node 1 through the order, and at once calls
// each one and hands it to node 2, which attaches and calls it at once too. Both calls of
// each object race its creation to node 1: each must run there, once.
TEST_P(ObjectRaces, CallsThatReachTheOwnerBeforeTheCreationRunOnceItIsApplied) {
  constexpr int kNodes = 3;
  constexpr int kObjects = 100;
  const iso::object_type int_type = iso::test::make_int_type();
  std::mutex mu;
  std::vector<std::string> failures;
  const int status = run_inproc(kNodes, opts(), [&](iso::node& node) {
    iso::register_object_type(node, int_type);
    iso::object first(node, int_type, {.placement = object_placement::replicated});
    auto note = [&](const std::string& what) {
      const std::lock_guard lock(mu);
      failures.push_back(what);
    };
    if (node.id() == 0) {
      std::vector<iso::object> made;
      std::vector<iso::pending<std::int64_t>> calls;
      for (int i = 0; i < kObjects; ++i) {
        made.push_back(iso::object::create(
            node, int_type, {.placement = object_placement::single_copy, .owner = 1}));
        calls.push_back(made.back().start<std::int64_t>(int_ops::kInc, std::int64_t{1}));
        send_value(node, 2, made.back().id());
      }
      for (int i = 0; i < kObjects; ++i) {
        try {
          const std::int64_t v = calls[i].get();
          if (v != 1 && v != 2)
            note("object " + std::to_string(i) + ": inc gave " + std::to_string(v));
        } catch (const iso::error& e) {
          note("node 0, object " + std::to_string(i) + ": " + e.what());
        }
      }
      (void)receive_value<int>(node);  // node 2's calls are done
      for (int i = 0; i < kObjects; ++i) {
        EXPECT_EQ(made[i].read<std::int64_t>(int_ops::kValue), 2) << "object " << i;
      }
      send_value(node, 1, 1);
    } else if (node.id() == 2) {
      std::vector<iso::pending<std::int64_t>> calls;
      std::vector<iso::object> given;
      for (int i = 0; i < kObjects; ++i) {
        given.push_back(iso::object::attach(node, receive_value<iso::object_id>(node)));
        calls.push_back(given.back().start<std::int64_t>(int_ops::kInc, std::int64_t{1}));
      }
      for (int i = 0; i < kObjects; ++i) {
        try {
          (void)calls[i].get();
        } catch (const iso::error& e) {
          note("node 2, object " + std::to_string(i) + ": " + e.what());
        }
      }
      send_value(node, 0, 1);
    } else {
      (void)receive_value<int>(node);  // serves the calls meanwhile
    }
  });
  EXPECT_EQ(status, 0);
  EXPECT_TRUE(failures.empty()) << failures.size() << " calls failed; the first: "
                                << (failures.empty() ? "" : failures.front());
}

}  // namespace
