// Run by isorun as 3 processes: fork between real processes (tests/support/fork_scenarios.hpp
// says what each scenario checks). The processes share one node each across the tests, so
// the procedures are registered once.
#include <gtest/gtest.h>

#include "tests/support/fork_scenarios.hpp"
#include "tests/support/job_test.hpp"

namespace {

iso::node& registered_node() {
  static iso::node& node = []() -> iso::node& {
    iso::node& n = iso::test::job_node();
    iso::test::register_fork_procedures(n);
    return n;
  }();
  return node;
}

TEST(ForkJob, ToEveryProcessAndAwaitResults) {
  iso::test::fork_to_every_node_and_await_results(registered_node());
}

TEST(ForkJob, ErrorsComeBackFromTheTargetProcess) {
  iso::test::fork_errors_name_procedure_and_node(registered_node());
}

TEST(ForkJob, OrcaStartMainOnNodeZeroForksWorkersEverywhere) {
  iso::test::orca_start_forks_workers_everywhere(registered_node());
}

}  // namespace
