// Non-blocking object calls (iso::object::start, iso::object_call, iso::pending) through real
// nodes of inproc jobs: many calls outstanding from every node at once, their results in the
// order started; calls to a single copy elsewhere; handles dropped without get(); errors
// through get(); ready() turning true without get().
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "iso/iso.hpp"
#include "tests/support/inproc_job.hpp"
#include "tests/support/object_test_params.hpp"
#include "tests/support/object_types.hpp"
#include "tests/support/test_support.hpp"

namespace {

using iso::error_code;
using iso::node_id;
using iso::object_placement;
using iso::test::expect_error;
using iso::test::run_inproc;
namespace int_ops = iso::test::int_ops;

// Every case runs under every placement and both objects orders.
class AsyncCalls : public iso::test::placement_order_test {
 protected:
  // Single copies live on the last node, so that the others call them remotely.
  [[nodiscard]] iso::object_options placed(node_id nodes) const {
    return {.placement = placement(), .owner = nodes - 1, .initial = {}};
  }
};

INSTANTIATE_TEST_SUITE_P(PlacementsAndOrders, AsyncCalls, iso::test::every_placement_and_order(),
                         iso::test::placement_order_name);

// Every node starts many increments before taking any result. inc() returns the value after
// it, so the results of all nodes together are 1..total, each once; writes of a replicated
// object enter the total order in the order started, so each node's results also rise.
TEST_P(AsyncCalls, ManyOutstandingIncrementsFromEveryNode) {
  constexpr int kNodes = 3;
  constexpr int kEach = 40;
  const iso::object_type int_type = iso::test::make_int_type();
  std::mutex mu;
  std::vector<std::vector<std::int64_t>> results(kNodes);
  std::vector<std::int64_t> totals(kNodes, -1);
  const int status = run_inproc(kNodes, opts(), [&](iso::node& node) {
    iso::object total(node, int_type, placed(node.count()));
    std::vector<iso::pending<std::int64_t>> calls;
    calls.reserve(kEach);
    for (int i = 0; i < kEach; ++i) {
      calls.push_back(total.start<std::int64_t>(int_ops::kInc, std::int64_t{1}));
    }
    std::vector<std::int64_t> got;
    got.reserve(calls.size());
    for (auto& c : calls) got.push_back(c.get());
    const auto v = total.read<std::int64_t>(int_ops::kAwait, std::int64_t{kNodes * kEach});
    std::lock_guard lock(mu);
    results[node.id()] = got;
    totals[node.id()] = v;
  });
  EXPECT_EQ(status, 0);
  std::vector<std::int64_t> all;
  for (int n = 0; n < kNodes; ++n) {
    EXPECT_EQ(totals[n], kNodes * kEach) << "node " << n;
    ASSERT_EQ(results[n].size(), static_cast<std::size_t>(kEach)) << "node " << n;
    if (placement() == object_placement::replicated) {
      EXPECT_TRUE(std::is_sorted(results[n].begin(), results[n].end()))
          << "node " << n << "'s writes were applied out of the order started";
    }
    all.insert(all.end(), results[n].begin(), results[n].end());
  }
  std::sort(all.begin(), all.end());
  for (std::size_t i = 0; i < all.size(); ++i) {
    ASSERT_EQ(all[i], static_cast<std::int64_t>(i + 1)) << "results are not 1..total once each";
  }
}

// A call to a single copy on another node: ready() turns true by itself (it makes progress),
// and get() then returns the result; the byte form works as the typed one.
TEST(AsyncCallsSingleCopy, StartOnOneNodeRunsOnTheOwner) {
  std::int64_t first = -1;
  std::int64_t second = -1;
  const iso::object_type int_type = iso::test::make_int_type();
  const int status = run_inproc(2, iso::test::object_job_options(), [&](iso::node& node) {
    iso::object x(node, int_type, {.placement = object_placement::single_copy, .owner = 1});
    if (node.id() == 0) {
      iso::pending<std::int64_t> c = x.start<std::int64_t>(int_ops::kInc, std::int64_t{5});
      EXPECT_TRUE(c.valid());
      while (!c.ready()) {
      }
      EXPECT_TRUE(c.ready()) << "ready() stays true until get()";
      first = c.get();
      EXPECT_FALSE(c.valid());
      const std::int64_t by = 2;
      iso::object_call raw =
          x.start(int_ops::kInc, std::as_bytes(std::span<const std::int64_t>(&by, 1)));
      const std::vector<std::byte> bytes = raw.get();
      ASSERT_EQ(bytes.size(), sizeof(std::int64_t));
      std::memcpy(&second, bytes.data(), sizeof(second));
      const std::byte done{1};
      node.send(1, std::span(&done, 1));
    } else {
      (void)node.receive();  // serves node 0's calls meanwhile
      EXPECT_EQ(x.writes_applied(), 2u);
    }
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(first, 5);
  EXPECT_EQ(second, 7);
}

// Handles dropped without get(): the calls still run everywhere, nothing waits for them,
// and later calls work as usual.
TEST_P(AsyncCalls, DroppedHandlesStillRunAndBreakNothing) {
  constexpr int kNodes = 3;
  constexpr int kEach = 30;
  const iso::object_type int_type = iso::test::make_int_type();
  std::mutex mu;
  std::vector<std::int64_t> seen(kNodes, -1);
  const int status = run_inproc(kNodes, opts(), [&](iso::node& node) {
    iso::object total(node, int_type, placed(node.count()));
    for (int i = 0; i < kEach; ++i) {
      (void)total.start<std::int64_t>(int_ops::kInc, std::int64_t{1});
      iso::object_call assigned_over = total.start(int_ops::kValue, {});
      assigned_over = total.start(int_ops::kValue, {});
    }
    const auto v = total.read<std::int64_t>(int_ops::kAwait, std::int64_t{kNodes * kEach});
    const auto after = total.call<std::int64_t>(int_ops::kInc, std::int64_t{0});
    EXPECT_GE(after, v);
    node.barrier();
    std::lock_guard lock(mu);
    seen[node.id()] = v;
  });
  EXPECT_EQ(status, 0);
  for (std::int64_t v : seen) EXPECT_EQ(v, kNodes * kEach);
}

// Automatic placement: the offer of the copy rides on the reply to a call whose handle was
// dropped; the node's next call takes it, so the copy still moves to its heaviest user.
TEST(AsyncCallsAutomatic, AnOfferOnADroppedCallIsTakenByTheNextCall) {
  constexpr std::int64_t kCalls = 200;
  const iso::object_type int_type = iso::test::make_int_type();
  node_id owner_after = 99;
  const int status = run_inproc(2, iso::test::object_job_options(), [&](iso::node& node) {
    iso::object x(node, int_type, {.placement = object_placement::automatic, .owner = 1});
    if (node.id() == 0) {
      for (std::int64_t i = 0; i < kCalls; ++i) {
        (void)x.start<std::int64_t>(int_ops::kInc, std::int64_t{1});
      }
      EXPECT_EQ(x.read<std::int64_t>(int_ops::kAwait, kCalls), kCalls);
      EXPECT_EQ(x.call<std::int64_t>(int_ops::kInc, std::int64_t{1}), kCalls + 1);
      owner_after = x.owner();
      const std::byte done{1};
      node.send(1, std::span(&done, 1));
    } else {
      (void)node.receive();
    }
    node.barrier();
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(owner_after, 0u) << "the copy did not move to the node that used it most";
}

// Errors reach get(): a guard or a body that throws (aborted, nothing applied); errors found
// before dispatch are thrown by start(); an empty handle refuses get() and ready().
TEST_P(AsyncCalls, ErrorsComeThroughGet) {
  const iso::object_type int_type = iso::test::make_int_type();
  const int status = run_inproc(2, opts(), [&](iso::node& node) {
    iso::object x(node, int_type, placed(node.count()));
    iso::pending<std::int64_t> guard_throws =
        x.start<std::int64_t>(int_ops::kFaulty, std::int64_t{1});
    iso::pending<std::int64_t> body_throws =
        x.start<std::int64_t>(int_ops::kFaulty, std::int64_t{0});
    expect_error(error_code::aborted,
                 "object 0 (Int), operation 5 (faulty): a guard threw: guard refuses",
                 [&] { (void)guard_throws.get(); });
    expect_error(error_code::aborted,
                 "object 0 (Int), operation 5 (faulty): the body threw: body fails half-way",
                 [&] { (void)body_throws.get(); });
    expect_error(error_code::failed_precondition, "holds no call",
                 [&] { (void)body_throws.get(); });
    expect_error(error_code::failed_precondition, "holds no call",
                 [&] { (void)body_throws.ready(); });
    expect_error(error_code::invalid_argument, "type Int has no operation 99",
                 [&] { (void)x.start(99, {}); });
    expect_error(error_code::failed_precondition, "is a write; it was called as a read", [&] {
      const std::int64_t by = 1;
      (void)x.start_read(int_ops::kInc, std::as_bytes(std::span<const std::int64_t>(&by, 1)));
    });
    expect_error(error_code::invalid_argument, "caller expects 4",
                 [&] { (void)x.start<std::int32_t>(int_ops::kValue).get(); });
    node.barrier();
    // Nothing was applied: one write from each node lands on 2.
    x.call<std::int64_t>(int_ops::kInc, std::int64_t{1});
    EXPECT_EQ(x.read<std::int64_t>(int_ops::kAwait, std::int64_t{2}), 2);
    node.barrier();
  });
  EXPECT_EQ(status, 0);
}

}  // namespace
