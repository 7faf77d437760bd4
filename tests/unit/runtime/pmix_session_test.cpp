// A process that no PMIx launcher started: the PMIx session says Unavailable (so the
// runtime falls back to its own bootstrap) and never fails or hangs.
#include "runtime/bootstrap/pmix_session.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "runtime/job.hpp"

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

// Sets an environment variable for one scope.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~scoped_env() { ::unsetenv(name_); }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;

 private:
  const char* name_;
};

TEST(TransportChoice, UnknownTransportIsNamed) {
  const scoped_env transport("ISO_TRANSPORT", "tcp");
  absl::StatusOr<job_plan> plan = plan_job({});
  ASSERT_TRUE(absl::IsInvalidArgument(plan.status())) << plan.status();
  EXPECT_NE(plan.status().message().find("ISO_TRANSPORT is 'tcp'; expected shm, inproc or ucx"),
            std::string::npos)
      << plan.status();
}

TEST(TransportChoice, UcxWithoutAPmixLauncherSaysHowToStartOne) {
  const scoped_env transport("ISO_TRANSPORT", "ucx");
  absl::StatusOr<job_plan> plan = plan_job({});
  ASSERT_TRUE(absl::IsFailedPrecondition(plan.status())) << plan.status();
  EXPECT_NE(plan.status().message().find("start a ucx job with mpirun or srun --mpi=pmix"),
            std::string::npos)
      << plan.status();
}

TEST(TransportChoice, UcxIsNotIsorunsToStart) {
  const scoped_env transport("ISO_TRANSPORT", "ucx");
  const scoped_env size("ISO_SIZE", "2");
  absl::StatusOr<job_plan> plan = plan_job({});
  ASSERT_TRUE(absl::IsInvalidArgument(plan.status())) << plan.status();
  EXPECT_NE(plan.status().message().find("ISO_SIZE is set"), std::string::npos) << plan.status();
}

TEST(TransportChoice, StalePmixVariablesFallBackToAJobOfOne) {
  // Chosen automatically, ucx gives way when no PMIx server answers.
  const scoped_env rank("PMIX_RANK", "0");
  const scoped_env nspace("PMIX_NAMESPACE", "stale-job");
  absl::StatusOr<job_plan> plan = plan_job({});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->env.transport, transport_kind::shm);
  EXPECT_EQ(plan->env.size, 1U);
  EXPECT_EQ(plan->pmix, nullptr);
}

}  // namespace
}  // namespace iso::runtime
