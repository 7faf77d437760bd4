// event_loop::wait_until(): the bounded wait every unit of the runtime uses. It ends with
// true once the condition held, false once the deadline passed first, and with the wait's
// own error; where both hold at the same check the condition wins. No case waits on the
// clock for its outcome: deadlines are already past, never reached, or the condition holds
// after a known number of checks.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "iso/fiber.hpp"
#include "iso/iso.hpp"
#include "runtime/node_state.hpp"
#include "tests/support/inproc_job.hpp"

namespace {

using iso::test::run_inproc;

iso::runtime::event_loop& loop_of(iso::node& node) {
  return iso::detail::node_state::of(node).loop();
}

// wait_until() on the loop of a one-node job, which must end well.
absl::StatusOr<bool> wait_on_one_node(absl::Time deadline, const std::function<bool()>& done) {
  absl::StatusOr<bool> held;
  const int status = run_inproc(
      1, iso::options{}, [&](iso::node& node) { held = loop_of(node).wait_until(deadline, done); });
  EXPECT_EQ(status, 0);
  return held;
}

TEST(WaitUntil, TrueOnceTheConditionHoldsBeforeTheDeadline) {
  int checks = 0;
  const absl::StatusOr<bool> held =
      wait_on_one_node(absl::InfiniteFuture(), [&] { return ++checks == 5; });
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_TRUE(*held);
  EXPECT_EQ(checks, 5);  // and not once more after it held: a condition may act
}

TEST(WaitUntil, FalseWhenTheDeadlineHasPassed) {
  int checks = 0;
  const absl::StatusOr<bool> held = wait_on_one_node(absl::InfinitePast(), [&] {
    ++checks;
    return false;
  });
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_FALSE(*held);
  EXPECT_EQ(checks, 1);  // a deadline already past still checks once, and no more
}

TEST(WaitUntil, FalseOnceADeadlineAheadPasses) {
  absl::Time deadline;
  absl::Time ended;
  absl::StatusOr<bool> held;
  const int status = run_inproc(1, iso::options{}, [&](iso::node& node) {
    deadline = absl::Now() + absl::Milliseconds(1);
    held = loop_of(node).wait_until(deadline, [] { return false; });
    ended = absl::Now();
  });
  EXPECT_EQ(status, 0);
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_FALSE(*held);
  EXPECT_GE(ended, deadline);  // it did not give up early
}

// The condition that holds at the check that also finds the deadline past wins: it may
// have acted (taken a message, submitted a batch), which a caller told "expired" would
// count as not done.
TEST(WaitUntil, TheConditionWinsOverADeadlinePassedAtTheSameCheck) {
  int checks = 0;
  const absl::StatusOr<bool> held =
      wait_on_one_node(absl::InfinitePast(), [&] { return ++checks == 1; });
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_TRUE(*held);
  EXPECT_EQ(checks, 1);
}

// Inside a message handler the loop refuses to make progress: that error is the wait's.
TEST(WaitUntil, PassesOnTheErrorOfTheWait) {
  int checks = 0;
  absl::StatusOr<bool> held;
  const int status = run_inproc(1, iso::options{}, [&](iso::node& node) {
    iso::runtime::event_loop& loop = loop_of(node);
    loop.forbid_progress("a message handler");
    held = loop.wait_until(absl::InfiniteFuture(), [&] {
      ++checks;
      return false;
    });
    loop.forbid_progress(nullptr);
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(held.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(held.status().message().find("inside a message handler"), std::string::npos)
      << held.status();
  EXPECT_EQ(checks, 1);
}

// Through the fiber switch: the waiting fiber is suspended while another runs, and the
// condition that other fiber makes true ends the wait with true.
TEST(WaitUntil, HoldsWhenAnotherFiberMakesTheConditionTrue) {
  bool set = false;
  int checks = 0;
  absl::StatusOr<bool> held;
  const int status = run_inproc(1, iso::options{}, [&](iso::node& node) {
    iso::fiber setter = iso::spawn(node, [&] {
      for (int i = 0; i < 3; ++i) iso::yield(node);
      set = true;
    });
    held = loop_of(node).wait_until(absl::InfiniteFuture(), [&] {
      ++checks;
      return set;
    });
    setter.join();
  });
  EXPECT_EQ(status, 0);
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_TRUE(*held);
  EXPECT_GE(checks, 2);  // false before the setter ran, true after
}

}  // namespace
