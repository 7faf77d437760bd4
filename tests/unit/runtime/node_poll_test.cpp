// node::poll(): a loop that only polls must still learn that the job failed, but looking
// at the job reads the clock, which costs more than an idle round itself, so only every
// event_loop::kPollsPerJobCheck-th poll looks.
#include <gtest/gtest.h>

#include <cstdint>

#include "iso/iso.hpp"
#include "runtime/node_state.hpp"
#include "tests/support/inproc_job.hpp"

namespace {

TEST(NodePoll, IdlePollsLookAtTheJobNowAndThen) {
  constexpr std::uint64_t kEvery = iso::runtime::event_loop::kPollsPerJobCheck;
  constexpr std::uint64_t kPolls = 100 * kEvery;
  std::uint64_t looks = 0;
  const int status = iso::test::run_inproc(1, iso::options{}, [&](iso::node& node) {
    const iso::runtime::event_loop& loop = iso::detail::node_state::of(node).loop();
    const std::uint64_t before = loop.job_checks();
    for (std::uint64_t i = 0; i < kPolls; ++i) node.poll();
    looks = loop.job_checks() - before;
  });
  EXPECT_EQ(status, 0);
  EXPECT_GE(looks, 1u);
  EXPECT_LE(looks, kPolls / kEvery);
}

}  // namespace
