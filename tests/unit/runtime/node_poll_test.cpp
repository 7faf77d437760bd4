// node::poll(): a loop that only polls must still learn that the job failed, but looking
// at the job reads the clock, which costs more than an idle round itself, so only every
// event_loop::kPollsPerJobCheck-th poll looks, idle or busy.
#include <gtest/gtest.h>

#include <cstdint>
#include <span>

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

// A unit of the node's event loop that finds work in every round, as one owing tokens to a
// dead peer would: no poll is ever idle.
class always_busy final : public iso::runtime::delivery_unit {
 public:
  void on_delivery(const iso::nicfw::delivery&) override {}
  [[nodiscard]] absl::Status end_round(std::uint64_t, bool& did_work) override {
    did_work = true;
    ++rounds_;
    return absl::OkStatus();
  }
  [[nodiscard]] std::uint64_t rounds() const { return rounds_; }

 private:
  std::uint64_t rounds_ = 0;
};

// Busy polls look at the job as often as idle ones: a loop whose every poll finds work must
// still learn that the job failed (it never looked when only idle polls counted).
TEST(NodePoll, BusyPollsLookAtTheJobToo) {
  constexpr std::uint64_t kEvery = iso::runtime::event_loop::kPollsPerJobCheck;
  constexpr std::uint64_t kPolls = 100 * kEvery;
  always_busy busy;  // outlives the node, whose loop keeps it to the end
  std::uint64_t looks = 0;
  std::uint64_t busy_rounds = 0;
  const int status = iso::test::run_inproc(1, iso::options{}, [&](iso::node& node) {
    iso::runtime::event_loop& loop = iso::detail::node_state::of(node).loop();
    loop.add_unit(busy, std::span<const iso::nicfw::delivery_kind>{});
    const std::uint64_t before = loop.job_checks();
    const std::uint64_t rounds_before = busy.rounds();
    for (std::uint64_t i = 0; i < kPolls; ++i) node.poll();
    looks = loop.job_checks() - before;
    busy_rounds = busy.rounds() - rounds_before;
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(busy_rounds, kPolls);  // every poll found work
  // Any kPolls consecutive polls hold exactly kPolls / kEvery looks.
  EXPECT_EQ(looks, kPolls / kEvery);
}

}  // namespace
