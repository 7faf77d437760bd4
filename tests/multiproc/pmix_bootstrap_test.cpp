// The PMIx bootstrap between real processes that a PMIx launcher started (mpirun, no MPI):
// every node of the job runs these tests in the same order, since each is collective.
#include "runtime/bootstrap/pmix_bootstrap.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "absl/strings/str_format.h"
#include "runtime/bootstrap/pmix_session.hpp"

namespace iso::runtime {
namespace {

constexpr absl::Duration kTimeout = absl::Seconds(30);

// One PMIx client per process, shared by the tests in order.
pmix_bootstrap& boot() {
  static std::unique_ptr<pmix_bootstrap> b = [] {
    absl::StatusOr<std::shared_ptr<pmix_session>> session = pmix_session::open();
    if (!session.ok()) {
      ADD_FAILURE() << session.status();
      std::abort();
    }
    return std::make_unique<pmix_bootstrap>(*std::move(session));
  }();
  return *b;
}

// Waits for the two-step barrier as a node's event loop would, without blocking in PMIx.
void pass(std::uint64_t ticket) {
  const absl::Time deadline = absl::Now() + kTimeout;
  for (;;) {
    absl::StatusOr<bool> passed = boot().barrier_passed(ticket);
    ASSERT_TRUE(passed.ok()) << passed.status();
    if (*passed) return;
    ASSERT_LT(absl::Now(), deadline) << "barrier " << ticket << " did not pass";
  }
}

TEST(PmixBootstrap, KnowsRankSizeAndOneSecret) {
  ASSERT_GE(boot().size(), 2U) << "run this test under mpirun -n 2 or more";
  ASSERT_LT(boot().rank(), boot().size());
  EXPECT_GE(boot().job_secret().size(), 32U);
  ASSERT_TRUE(boot().put("secret", boot().job_secret()).ok());
  ASSERT_TRUE(boot().fence(kTimeout).ok());
  for (std::uint32_t n = 0; n < boot().size(); ++n) {
    absl::StatusOr<std::string> theirs = boot().get(n, "secret");
    ASSERT_TRUE(theirs.ok()) << theirs.status();
    EXPECT_EQ(*theirs, boot().job_secret()) << "node " << n << " has another secret";
  }
}

TEST(PmixBootstrap, PutFenceGetReachesEveryNode) {
  // Binary values, a NUL inside, and one value per node that names the node.
  const std::string value =
      absl::StrFormat("node %u", boot().rank()) + std::string(1, '\0') + "\xff";
  ASSERT_TRUE(boot().put("address", value).ok());
  ASSERT_TRUE(
      boot().put("big", std::string(64 * 1024, static_cast<char>('a' + boot().rank()))).ok());
  ASSERT_TRUE(boot().fence(kTimeout).ok());
  for (std::uint32_t n = 0; n < boot().size(); ++n) {
    absl::StatusOr<std::string> got = boot().get(n, "address");
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, absl::StrFormat("node %u", n) + std::string(1, '\0') + "\xff");
    absl::StatusOr<std::string> big = boot().get(n, "big");
    ASSERT_TRUE(big.ok()) << big.status();
    EXPECT_EQ(*big, std::string(64 * 1024, static_cast<char>('a' + n)));
  }
}

TEST(PmixBootstrap, BadKeysAreNamed) {
  absl::StatusOr<std::string> missing = boot().get(0, "never-put");
  ASSERT_TRUE(absl::IsNotFound(missing.status())) << missing.status();
  EXPECT_NE(missing.status().message().find("node 0 published no bootstrap key 'never-put'"),
            std::string::npos)
      << missing.status();
  EXPECT_TRUE(absl::IsInvalidArgument(boot().put("", "x")));
  EXPECT_TRUE(absl::IsInvalidArgument(boot().get(boot().size(), "address").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(boot().put(std::string(600, 'k'), "x")));
}

TEST(PmixBootstrap, TwoStepBarrierCarriesDigestsAndMarks) {
  for (std::uint64_t round = 1; round <= 5; ++round) {
    boot().publish_mark(round * 100 + boot().rank());
    const std::uint64_t ticket = boot().barrier_arrive(round * 7);
    EXPECT_TRUE(boot().barrier_arrived(boot().rank(), ticket));
    pass(ticket);
    EXPECT_EQ(boot().max_mark(), round * 100 + boot().size() - 1);
    for (std::uint32_t n = 0; n < boot().size(); ++n) {
      EXPECT_EQ(boot().barrier_digest(n, ticket), round * 7) << "node " << n;
      EXPECT_TRUE(boot().barrier_arrived(n, ticket));
    }
  }
}

TEST(PmixBootstrap, DisagreeingDigestIsSeen) {
  const std::uint64_t digest = boot().rank() == 1 ? 99 : 42;
  const std::uint64_t ticket = boot().barrier_arrive(digest);
  pass(ticket);
  for (std::uint32_t n = 0; n < boot().size(); ++n) {
    EXPECT_EQ(boot().barrier_digest(n, ticket), n == 1 ? 99U : 42U) << "node " << n;
  }
}

// Thousands of two-step barriers, each with a digest and marks of its own: what a node reads
// at one barrier is never what it or another node arrived with at an earlier one, however
// the barriers' keys are reused.
TEST(PmixBootstrap, ThousandsOfBarriersKeepTheirArrivalsApart) {
  constexpr std::uint64_t kBarriers = 2000;
  for (std::uint64_t round = 1; round <= kBarriers; ++round) {
    boot().publish_mark(round * 10 + boot().rank());
    const std::uint64_t ticket = boot().barrier_arrive(round * 1000 + boot().rank());
    pass(ticket);
    ASSERT_EQ(boot().max_mark(), round * 10 + boot().size() - 1) << "barrier " << round;
    for (std::uint32_t n = 0; n < boot().size(); ++n) {
      ASSERT_EQ(boot().barrier_digest(n, ticket), round * 1000 + n)
          << "node " << n << " at barrier " << round;
    }
  }
}

TEST(PmixBootstrap, BlockingBarriersInARow) {
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(boot().barrier(kTimeout).ok());
  EXPECT_TRUE(boot().job_status().ok()) << boot().job_status();
}

}  // namespace
}  // namespace iso::runtime
