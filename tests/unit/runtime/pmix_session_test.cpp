// A process that no PMIx launcher started: the PMIx session says Unavailable (so the
// runtime falls back to its own bootstrap) and never fails or hangs.
#include "runtime/bootstrap/pmix_session.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace iso::runtime {
namespace {

TEST(PmixSession, WithoutPmixVariablesIsUnavailable) {
  ::unsetenv("PMIX_RANK");
  ::unsetenv("PMIX_NAMESPACE");
  EXPECT_FALSE(pmix_session::launched_by_pmix());
  absl::StatusOr<std::shared_ptr<pmix_session>> session = pmix_session::open();
  ASSERT_TRUE(absl::IsUnavailable(session.status())) << session.status();
  EXPECT_NE(session.status().message().find("not started by a PMIx launcher"), std::string::npos)
      << session.status();
}

TEST(PmixSession, PmixVariablesWithoutAServerAreUnavailable) {
  // What a stale environment looks like: the variables, but no server to answer.
  ::setenv("PMIX_RANK", "0", 1);
  ::setenv("PMIX_NAMESPACE", "stale-job", 1);
  EXPECT_TRUE(pmix_session::launched_by_pmix());
  absl::StatusOr<std::shared_ptr<pmix_session>> session = pmix_session::open(absl::Seconds(5));
  ::unsetenv("PMIX_RANK");
  ::unsetenv("PMIX_NAMESPACE");
  ASSERT_TRUE(absl::IsUnavailable(session.status())) << session.status();
  EXPECT_NE(session.status().message().find("no PMIx server answers"), std::string::npos)
      << session.status();
}

}  // namespace
}  // namespace iso::runtime
