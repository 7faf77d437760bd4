// A barrier passes in the job's shared memory, beside the NICs: no packet wakes a node that
// sleeps in it, so its wait must not sleep a whole waiter-policy sleep at a time. Here the
// sleeps last 20 s; node 1 reaches the barrier only once node 0 has gone to sleep in it,
// and node 0 must leave soon after, not when its sleep runs out. It once took up to 50 ms
// (the policy's sleep) per barrier whose nodes arrived a little apart.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "absl/time/time.h"
#include "iso/iso.hpp"
#include "runtime/node_state.hpp"
#include "tests/support/inproc_job.hpp"

namespace {

iso::runtime::event_loop& loop_of(iso::node& node) {
  return iso::detail::node_state::of(node).loop();
}

class BarrierWake : public testing::TestWithParam<iso::nic_mode> {};

INSTANTIATE_TEST_SUITE_P(NicModes, BarrierWake,
                         testing::Values(iso::nic_mode::inline_poll, iso::nic_mode::thread),
                         [](const testing::TestParamInfo<iso::nic_mode>& mode) {
                           return mode.param == iso::nic_mode::thread ? "thread" : "inline";
                         });

TEST_P(BarrierWake, ANodeAsleepInABarrierLeavesSoonAfterTheLastOneArrives) {
  iso::options opts;
  opts.nic = GetParam();
  opts.barrier_timeout = std::chrono::seconds(120);
  std::atomic<iso::runtime::event_loop*> zero{nullptr};
  std::atomic<std::uint64_t> zero_sleeps{0};
  std::atomic<std::int64_t> left_after_ms{-1};
  const int status = iso::test::run_inproc(2, opts, [&](iso::node& node) {
    iso::runtime::event_loop& loop = loop_of(node);
    iso::runtime::waiter_policy policy = loop.policy();
    policy.sleep = absl::Seconds(20);
    policy.doze = absl::ZeroDuration();
    loop.set_policy(policy);
    node.barrier();
    if (node.id() == 0) {
      zero_sleeps = loop.sleeps();
      zero = &loop;
      node.barrier();
      node.barrier();
      return;
    }
    // Node 0's loop sleeps once it has waited in the barrier for a while.
    while (zero.load() == nullptr || zero.load()->sleeps() == zero_sleeps.load()) {
      std::this_thread::yield();
    }
    const auto arrived = std::chrono::steady_clock::now();
    node.barrier();
    // Node 0 is out once it answers: the end of the job needs it in the next barrier.
    node.barrier();
    left_after_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - arrived)
                        .count();
  });
  ASSERT_EQ(status, 0);
  EXPECT_GE(left_after_ms.load(), 0);
  // A missed wake-up costs a whole sleep, 20 s; a kept one a millisecond or so.
  EXPECT_LT(left_after_ms.load(), 10'000) << "node 0 slept through the barrier's end";
}

}  // namespace
