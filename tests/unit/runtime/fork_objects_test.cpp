// Fork with shared objects (iso/fork.hpp, Shared objects), as Orca's fork(node, procedure,
// arguments, shared objects): workers forked to every node are handed the forker's counter
// and increment it, under every placement and both objects orders, for an object made
// collectively and one made by main alone through the order; misuse is refused before the
// process runs, naming the procedure, the object and the node, and the target goes on.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "iso/fork.hpp"
#include "iso/iso.hpp"
#include "iso/object.hpp"
#include "tests/support/fork_object_scenarios.hpp"
#include "tests/support/inproc_job.hpp"
#include "tests/support/object_test_params.hpp"
#include "tests/support/object_types.hpp"
#include "tests/support/played_order.hpp"
#include "tests/support/test_support.hpp"

namespace {

namespace int_ops = iso::test::int_ops;

constexpr int kNodes = 3;

// Every node registers the same procedures: "add_to" (fork_object_scenarios.hpp) and "plain",
// which takes no objects.
void register_procedures(iso::node& node) {
  iso::test::register_object_fork_procedures(node);
  iso::register_procedure<>(node, "plain", [](iso::node&) {});
}

class ForkWithObjects : public iso::test::placement_order_test {};
INSTANTIATE_TEST_SUITE_P(PlacementsAndOrders, ForkWithObjects,
                         iso::test::every_placement_and_order(), iso::test::placement_order_name);

// An object every node made (the collective constructor), forked from node 0.
TEST_P(ForkWithObjects, WorkersOnEveryNodeIncrementTheForkersObject) {
  const iso::object_placement where = placement();
  const int status = iso::test::run_inproc(kNodes, opts(), [&](iso::node& node) {
    register_procedures(node);
    iso::test::workers_increment_the_forkers_object(node, where);
  });
  EXPECT_EQ(status, 0);
}

// An object made by main alone (object::create): the targets attach it when the fork comes.
TEST_P(ForkWithObjects, AnObjectMadeByMainAloneReachesEveryWorker) {
  const iso::object_type int_type = iso::test::make_int_type();
  std::int64_t total = -1;
  const int status = iso::test::run_inproc(kNodes, opts(), [&](iso::node& node) {
    register_procedures(node);
    iso::register_object_type(node, int_type);
    iso::run_main_on_first(node, [&] {
      iso::object counter = iso::object::create(
          node, int_type, {.placement = placement(), .owner = node.count() - 1});
      total = iso::test::fork_adders_everywhere(node, counter);
    });
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(total, iso::test::forked_adders_total(kNodes));
}

class ForkObjectMisuse : public iso::test::nic_mode_test {};
INSTANTIATE_TEST_SUITE_P(NicModes, ForkObjectMisuse, iso::test::both_nic_modes(),
                         iso::test::nic_mode_name);

TEST_P(ForkObjectMisuse, IsRefusedBeforeTheProcessRunsAndNamesWhatWasWrong) {
  const iso::object_type int_type = iso::test::make_int_type();
  // A handle that outlives its job: its id names nothing in the next job.
  std::optional<iso::object> from_an_ended_job;
  ASSERT_EQ(iso::test::run_inproc(1, opts(),
                                  [&](iso::node& node) {
                                    from_an_ended_job.emplace(node, int_type,
                                                              iso::object_options{});
                                  }),
            0);
  std::vector<std::optional<iso::object>> handles(kNodes);
  std::int64_t total = -1;
  const int status = iso::test::run_inproc(kNodes, opts(), [&](iso::node& node) {
    register_procedures(node);
    iso::object counter(node, int_type, {.placement = iso::object_placement::replicated});
    handles[node.id()] = counter;  // each node's own handle, for the misuse below
    iso::run_main_on_first(node, [&] {
      const iso::node_id last = node.count() - 1;
      const auto args = iso::pack(counter.id(), std::int64_t{1});
      iso::test::expect_error(iso::error_code::invalid_argument, "the job has nodes", [&] {
        (void)iso::fork(node, node.count(), "add_to", {counter}, args);
      });
      iso::test::expect_error(iso::error_code::failed_precondition, "its node has ended", [&] {
        (void)iso::fork(node, last, "add_to", {*from_an_ended_job}, args);
      });
      iso::test::expect_error(iso::error_code::failed_precondition, "is a handle of node 1",
                              [&] { (void)iso::fork(node, last, "add_to", {*handles[1]}, args); });
      const std::string takes_none =
          "fork of 'plain' to node " + std::to_string(last) + ": 1 shared object(s) handed";
      iso::test::expect_error(iso::error_code::invalid_argument, takes_none.c_str(),
                              [&] { (void)iso::fork(node, last, "plain", {counter}); });
      // Nothing ran: the counter is as it was; the target still serves.
      EXPECT_EQ(counter.read<std::int64_t>(int_ops::kValue), 0);
      iso::fork(node, last, "add_to", {counter}, args).join();
      total = counter.read<std::int64_t>(int_ops::kAwait, std::int64_t{1});
    });
    handles[node.id()].reset();
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(total, 1);
}

// The forker hands an object made by one node whose creation the target never applies (the
// test plays the objects order: only the forker gets the creation). The target gives up
// attaching it within half the forker's wait, so the forker's error names the object and
// says why, instead of the target giving no answer in time.
TEST_P(ForkObjectMisuse, AnObjectTheTargetNeverGetsIsNamedInTheForkersError) {
  iso::options o = opts();
  o.barrier_timeout = std::chrono::seconds(4);  // the forker's wait for an answer
  std::string failure = "the fork was not refused";
  iso::error_code code = iso::error_code::unknown;
  const int status = iso::test::run_inproc(2, o, [&](iso::node& node) {
    iso::test::played_order played(node);
    register_procedures(node);
    iso::run_main_on_first(node, [&] {
      played.deliver(iso::test::creation(iso::object_placement::single_copy, 0, o.object_order));
      iso::object counter = iso::object::attach(node, iso::test::kFirstOrdered);
      try {
        iso::fork(node, 1, "add_to", {counter}, iso::pack(counter.id(), std::int64_t{1})).join();
      } catch (const iso::error& e) {
        code = e.code();
        failure = e.what();
      }
    });
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(code, iso::error_code::deadline_exceeded) << failure;
  const std::string object = "shared object " + std::to_string(iso::test::kFirstOrdered);
  EXPECT_NE(failure.find(object), std::string::npos) << failure;
  EXPECT_NE(failure.find("was not created here"), std::string::npos) << failure;
}

}  // namespace
