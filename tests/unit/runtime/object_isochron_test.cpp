// Object writes inside isochrons (iso::object::start(isochron&, ...)): two objects and a
// shared variable changed in one isochron are never seen in part by readers on any node
// (2 and 3 nodes, both NIC modes), and every call that may not join an isochron is refused,
// naming the object and the operation, with nothing added.
#include <gtest/gtest.h>

#include <cstdint>
#include <future>
#include <string>
#include <tuple>
#include <vector>

#include "iso/iso.hpp"
#include "tests/support/inproc_job.hpp"
#include "tests/support/object_isochron_scenarios.hpp"
#include "tests/support/object_test_params.hpp"
#include "tests/support/object_types.hpp"
#include "tests/support/test_support.hpp"

namespace {

using iso::error_code;
using iso::object_placement;
using iso::test::expect_error;
using iso::test::run_inproc;
namespace int_ops = iso::test::int_ops;
namespace queue_ops = iso::test::queue_ops;

iso::options isotach_options(iso::nic_mode mode) {
  iso::options o = iso::test::object_job_options(iso::order_kind::isotach);
  o.nic = mode;
  return o;
}

class ObjectIsochron : public testing::TestWithParam<std::tuple<iso::nic_mode, int>> {};
INSTANTIATE_TEST_SUITE_P(NicModesAndNodes, ObjectIsochron,
                         testing::Combine(iso::test::both_nic_modes(), testing::Values(2, 3)),
                         [](const testing::TestParamInfo<ObjectIsochron::ParamType>& p) {
                           return std::string(std::get<0>(p.param) == iso::nic_mode::thread
                                                  ? "Thread"
                                                  : "Inline") +
                                  std::to_string(std::get<1>(p.param)) + "Nodes";
                         });

TEST_P(ObjectIsochron, TwoObjectsAndAVariableChangeTogetherForEveryReader) {
  const auto [mode, nodes] = GetParam();
  EXPECT_EQ(
      run_inproc(nodes, isotach_options(mode),
                 [](iso::node& node) { iso::test::transfers_are_never_seen_in_part(node, 60); }),
      0);
}

// Every call that may not join an isochron is refused from start(), naming the object, the
// operation and the rule; the isochron stays open and usable, and nothing of a refused call
// is applied anywhere.
TEST(ObjectIsochronMisuse, EveryCallThatMayNotJoinIsRefusedAndNothingIsAdded) {
  const iso::object_type int_type = iso::test::make_int_type();
  const iso::object_type queue_type = iso::test::make_queue_type();
  const int status = run_inproc(2, isotach_options(iso::nic_mode::automatic), [&](iso::node& node) {
    iso::object x(node, int_type, {.placement = object_placement::replicated});
    iso::object single(node, int_type, {.placement = object_placement::single_copy, .owner = 1});
    iso::object automatic(node, int_type, {.placement = object_placement::automatic, .owner = 1});
    // Automatic but replicated now (the hint says reads dominate): it could become a single
    // copy before the isochron takes effect, so it is refused too.
    iso::object automatic_replicated(node, int_type,
                                     {.placement = object_placement::automatic,
                                      .owner = 1,
                                      .initial = {},
                                      .reads_per_write = 10});
    iso::object queue(node, queue_type, {.placement = object_placement::replicated});
    node.barrier();
    iso::pending<std::int64_t> good;
    {
      iso::isochron in(node);
      expect_error(error_code::failed_precondition, "(Int), operation 0 (inc)",
                   [&] { (void)single.start<std::int64_t>(in, int_ops::kInc, std::int64_t{1}); });
      expect_error(error_code::failed_precondition, "single copy",
                   [&] { (void)single.start<std::int64_t>(in, int_ops::kInc, std::int64_t{1}); });
      expect_error(error_code::failed_precondition, "automatic placement", [&] {
        (void)automatic.start<std::int64_t>(in, int_ops::kInc, std::int64_t{1});
      });
      ASSERT_EQ(automatic_replicated.current_placement(), object_placement::replicated);
      expect_error(error_code::failed_precondition, "automatic placement (now replicated)", [&] {
        (void)automatic_replicated.start<std::int64_t>(in, int_ops::kInc, std::int64_t{1});
      });
      expect_error(error_code::failed_precondition, "operation 1 (value) in an isochron",
                   [&] { (void)x.start<std::int64_t>(in, int_ops::kValue); });
      expect_error(error_code::failed_precondition, "is a read",
                   [&] { (void)x.start<std::int64_t>(in, int_ops::kValue); });
      expect_error(error_code::failed_precondition, "(JobQueue), operation 2 (get)",
                   [&] { (void)queue.start<std::int64_t>(in, queue_ops::kGet); });
      expect_error(error_code::failed_precondition, "guarded",
                   [&] { (void)queue.start<std::int64_t>(in, queue_ops::kGet); });
      expect_error(error_code::failed_precondition,
                   "a false guard cannot block an atomic isochron (it takes effect whole, at "
                   "once, or not at all): call get outside the isochron",
                   [&] { (void)queue.start<std::int64_t>(in, queue_ops::kGet); });
      expect_error(error_code::invalid_argument, "has no operation 99", [&] {
        (void)x.start<std::int64_t>(in, iso::operation_id{99}, std::int64_t{1});
      });
      expect_error(error_code::invalid_argument,
                   "operation 0 (inc) takes (long); the call passes (int)",
                   [&] { (void)x.start<std::int64_t>(in, int_ops::kInc, std::int32_t{1}); });
      // Bytes of the wrong size, where no types are known.
      expect_error(error_code::invalid_argument, "operation 0 (inc) in an isochron", [&] {
        (void)x.start(in, int_ops::kInc, std::vector<std::byte>(4));  // 4 bytes, not 8
      });
      // Still open and usable: a write that may join does.
      good = x.start<std::int64_t>(in, int_ops::kInc, std::int64_t{5});
      EXPECT_FALSE(good.ready()) << "applied before its isochron was issued";
      expect_error(error_code::failed_precondition, "inside an open isochron",
                   [&] { (void)good.get(); });
    }
    // get() threw before it took the call: the call is still there.
    ASSERT_TRUE(good.valid());
    const std::int64_t after = good.get();  // either node's write may come first
    EXPECT_TRUE(after == 5 || after == 10) << after;
    {
      iso::isochron in(node);
      in.end();
      expect_error(error_code::failed_precondition, "already issued",
                   [&] { (void)x.start<std::int64_t>(in, int_ops::kInc, std::int64_t{1}); });
    }
    node.barrier();
    // Only the two good writes were applied, on every node.
    EXPECT_EQ(x.read<std::int64_t>(int_ops::kValue), 10);
    EXPECT_EQ(x.writes_applied(), 2u);
    EXPECT_EQ(queue.writes_applied(), 0u);
  });
  EXPECT_EQ(status, 0);
}

// An isochron is its node's: another node's object handle refuses it, naming both nodes.
// (Node 0 holds its isochron open, without calling into the runtime, until node 1 tried.)
TEST(ObjectIsochronMisuse, AnotherNodesIsochronIsRefused) {
  const iso::object_type int_type = iso::test::make_int_type();
  std::promise<iso::isochron*> opened;
  std::promise<void> tried;
  const int status = run_inproc(2, isotach_options(iso::nic_mode::automatic), [&](iso::node& node) {
    iso::object x(node, int_type, {.placement = object_placement::replicated});
    if (node.id() == 0) {
      iso::isochron in(node);
      opened.set_value(&in);
      tried.get_future().wait();
    } else {
      iso::isochron* other = opened.get_future().get();
      expect_error(error_code::failed_precondition, "the isochron is node 0's",
                   [&] { (void)x.start<std::int64_t>(*other, int_ops::kInc, std::int64_t{1}); });
      tried.set_value();
    }
    node.barrier();
    EXPECT_EQ(x.writes_applied(), 0u);
  });
  EXPECT_EQ(status, 0);
}

// Under the sequencer order no object write may join an isochron.
TEST(ObjectIsochronMisuse, TheSequencerOrderIsRefusedNamingIt) {
  const iso::object_type int_type = iso::test::make_int_type();
  iso::options o = iso::test::object_job_options(iso::order_kind::sequencer);
  const int status = run_inproc(2, o, [&](iso::node& node) {
    iso::object x(node, int_type, {.placement = object_placement::replicated});
    {
      iso::isochron in(node);
      expect_error(error_code::failed_precondition, "objects order is sequencer",
                   [&] { (void)x.start<std::int64_t>(in, int_ops::kInc, std::int64_t{1}); });
    }
    node.barrier();
    EXPECT_EQ(x.writes_applied(), 0u);
  });
  EXPECT_EQ(status, 0);
}

}  // namespace
