// Run by isorun as 2 processes, with options::object_call_timeout short (the environment of
// the ctest entry): a call to a single copy whose owner gives no sign of life (the owner's
// process is stopped) ends with deadline_exceeded naming the object, the operation and the
// owner, and its late answer is discarded once the owner runs again; a guarded call that
// the owner queued waits far longer than the bound and is not ended by it.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "tests/support/job_test.hpp"
#include "tests/support/object_types.hpp"
#include "tests/support/value_messages.hpp"

namespace {

using iso::object_placement;
namespace int_ops = iso::test::int_ops;

using iso::test::receive_value;
using iso::test::send_value;

TEST(ObjectDeadline, ACallToAStoppedOwnerEndsWithDeadlineExceeded) {
  iso::node& node = iso::test::job_node();
  ASSERT_EQ(node.count(), 2u);
  const iso::object_type int_type = iso::test::make_int_type();
  iso::object x(node, int_type, {.placement = object_placement::single_copy, .owner = 1});
  if (node.id() == 1) {
    send_value(node, 0, static_cast<std::int64_t>(getpid()));
    // Serves node 0's calls while it waits; it is stopped and continued in the meantime.
    EXPECT_EQ(receive_value<std::int64_t>(node), 1);
  } else {
    const auto owner = static_cast<pid_t>(receive_value<std::int64_t>(node));
    EXPECT_EQ(x.call<std::int64_t>(int_ops::kInc, std::int64_t{1}), 1);
    ASSERT_EQ(kill(owner, SIGSTOP), 0);
    try {
      x.call<std::int64_t>(int_ops::kInc, std::int64_t{1});
      ADD_FAILURE() << "a call to a stopped owner returned";
    } catch (const iso::error& e) {
      EXPECT_EQ(e.code(), iso::error_code::deadline_exceeded) << e.what();
      const std::string what = e.what();
      EXPECT_NE(what.find("object 0 (Int), operation 0 (inc)"), std::string::npos) << what;
      EXPECT_NE(what.find("its owner, node 1, gave no sign of life"), std::string::npos) << what;
    }
    ASSERT_EQ(kill(owner, SIGCONT), 0);
    // The late call ran when the owner went on (requests from one node are served in the
    // order they were sent), and its reply was dropped: this read sees it, once.
    EXPECT_EQ(x.read<std::int64_t>(int_ops::kValue), 2);
    send_value(node, 1, std::int64_t{1});
  }
  node.barrier();
}

TEST(ObjectDeadline, AGuardedCallTheOwnerQueuedWaitsPastTheBound) {
  iso::node& node = iso::test::job_node();
  const iso::object_type int_type = iso::test::make_int_type();
  iso::object x(node, int_type, {.placement = object_placement::single_copy, .owner = 1});
  const auto bound = node.options().object_call_timeout;
  if (node.id() == 1) {
    while (x.waiting_calls() == 0) (void)node.try_receive();
    // Serving, but the guard stays false for three times the bound.
    const auto until = std::chrono::steady_clock::now() + 3 * bound;
    while (std::chrono::steady_clock::now() < until) (void)node.try_receive();
    x.call<std::int64_t>(int_ops::kInc, std::int64_t{5});
  } else {
    EXPECT_EQ(x.read<std::int64_t>(int_ops::kAwait, std::int64_t{5}), 5);
  }
  node.barrier();
}

}  // namespace
