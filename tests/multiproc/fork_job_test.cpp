// Run by isorun as 3 processes: fork between real processes, with shared objects handed to
// the forked workers too (tests/support/fork_scenarios.hpp and fork_object_scenarios.hpp say
// what each scenario checks). The processes share one node each across the tests, so
// the procedures are registered once.
#include <gtest/gtest.h>

#include "tests/support/fork_object_scenarios.hpp"
#include "tests/support/fork_scenarios.hpp"
#include "tests/support/job_test.hpp"

namespace {

iso::node& registered_node() {
  static iso::node& node = []() -> iso::node& {
    iso::node& n = iso::test::job_node();
    iso::test::register_fork_procedures(n);
    iso::test::register_object_fork_procedures(n);
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

// Workers forked to every process are handed node 0's object and increment it, for each
// placement (the object is made by every process; ids travel with the forks). Before the
// Orca-style start below: its end stops the processes serving forks for good.
TEST(ForkJob, WorkersIncrementAReplicatedObjectTheyAreHanded) {
  iso::test::workers_increment_the_forkers_object(registered_node(),
                                                  iso::object_placement::replicated);
}

TEST(ForkJob, WorkersIncrementASingleCopyTheyAreHanded) {
  iso::test::workers_increment_the_forkers_object(registered_node(),
                                                  iso::object_placement::single_copy);
}

TEST(ForkJob, WorkersIncrementAnAutomaticObjectTheyAreHanded) {
  iso::test::workers_increment_the_forkers_object(registered_node(),
                                                  iso::object_placement::automatic);
}

TEST(ForkJob, OrcaStartMainOnNodeZeroForksWorkersEverywhere) {
  iso::test::orca_start_forks_workers_everywhere(registered_node());
}

}  // namespace
