// Fork (iso/fork.hpp) in one process, nodes on threads: forks to every node and back,
// every error named, and the Orca-style start. The same scenarios run as a job of processes
// in tests/multiproc/fork_job_test.cpp.
#include <gtest/gtest.h>

#include "iso/iso.hpp"
#include "tests/support/fork_scenarios.hpp"
#include "tests/support/inproc_job.hpp"

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
