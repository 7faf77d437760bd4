// Fork (iso/fork.hpp) in one process, nodes on threads: forks to every node and back,
// every error named, and the Orca-style start. The same scenarios run as a job of processes
// in tests/multiproc/fork_job_test.cpp.
#include <gtest/gtest.h>

#include <atomic>
#include <span>
#include <stdexcept>
#include <string>

#include "iso/iso.hpp"
#include "tests/support/fork_scenarios.hpp"
#include "tests/support/inproc_job.hpp"
#include "tests/support/test_support.hpp"

namespace {

class Fork : public iso::test::nic_mode_test {};
INSTANTIATE_TEST_SUITE_P(NicModes, Fork, iso::test::both_nic_modes(), iso::test::nic_mode_name);

TEST_P(Fork, ToEveryNodeAndAwaitResults) {
  EXPECT_EQ(iso::test::run_inproc(4, opts(),
                                  [](iso::node& node) {
                                    iso::test::register_fork_procedures(node);
                                    iso::test::fork_to_every_node_and_await_results(node);
                                  }),
            0);
}

TEST_P(Fork, ErrorsNameTheProcedureAndTheNode) {
  EXPECT_EQ(iso::test::run_inproc(3, opts(),
                                  [](iso::node& node) {
                                    iso::test::register_fork_procedures(node);
                                    iso::test::fork_errors_name_procedure_and_node(node);
                                  }),
            0);
}

TEST_P(Fork, OrcaStartMainOnNodeZeroForksWorkersEverywhere) {
  EXPECT_EQ(iso::test::run_inproc(4, opts(),
                                  [](iso::node& node) {
                                    iso::test::register_fork_procedures(node);
                                    iso::test::orca_start_forks_workers_everywhere(node);
                                  }),
            0);
}

// Processes forked and never joined: the forker's body returns at once, and so does the
// target's. Neither node leaves before they have ended (the slow one runs to its end), and
// the one that threw fails the job with its message instead of vanishing.
TEST_P(Fork, ProcessesNobodyJoinsRunToTheirEndAndTheirExceptionsAreReported) {
  iso::test::allow_log_lines_in_this_test();
  std::atomic<int> slow_steps{0};
  constexpr int kSteps = 200;
  testing::internal::CaptureStderr();
  const int status = iso::test::run_inproc(2, opts(), [&](iso::node& node) {
    iso::register_procedure(node, "slow", [&](iso::node& n, std::span<const std::byte>) {
      for (int i = 0; i < kSteps; ++i) {
        iso::yield(n);
        ++slow_steps;
      }
    });
    iso::register_procedure(node, "thrower", [](iso::node&, std::span<const std::byte>) {
      throw std::runtime_error("the thrower's exception");
    });
    if (node.id() != 0) return;
    (void)iso::fork(node, 1, "slow");
    (void)iso::fork(node, 1, "thrower");
  });
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(slow_steps.load(), kSteps);
  EXPECT_NE(status, 0);
  EXPECT_NE(log.find("node 0: 1 process(es) it forked and did not join failed; the first: "
                     "procedure 'thrower' forked to node 1 ended with an exception: the "
                     "thrower's exception"),
            std::string::npos)
      << log;
}

// A job of one node: main forks to itself.
TEST(ForkAlone, MainForksToItsOwnNode) {
  EXPECT_EQ(iso::test::run_inproc(1, iso::options{},
                                  [](iso::node& node) {
                                    iso::test::register_fork_procedures(node);
                                    iso::test::orca_start_forks_workers_everywhere(node);
                                  }),
            0);
}

}  // namespace
