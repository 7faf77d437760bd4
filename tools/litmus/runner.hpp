// Runs a litmus test many times on the nodes of a job and gathers, at node 0, the outcome
// of every run and the recorded history of every run, checked by tools/sc/sc_graph.
//
// Each run has fresh variables (one page each, options::page_variables = 1), a random
// copyset per variable, a random choice of which node runs which process, and a random
// delay before each isochron. The randomness of the placements comes from one seed that
// every node shares; the delays differ per node.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "iso/node.hpp"
#include "iso/trace.hpp"
#include "tools/litmus/litmus_test.hpp"
#include "tools/litmus/sc_outcomes.hpp"
#include "tools/sc/sc_graph.hpp"

namespace iso::litmus {

struct run_options {
  std::uint32_t iterations = 100;
  std::uint64_t seed = 1;
  std::uint32_t max_delay_us = 20;  // each isochron waits 0..max_delay_us before issue
};

// One run, kept for pictures: its history and how the checker judged it.
struct kept_run {
  std::uint32_t iteration = 0;
  outcome result;
  std::vector<iso::trace_event> events;
  std::map<std::uint64_t, std::string> names;  // address -> location
  std::vector<iso::node_id> process_node;      // where each process ran
  iso::sc::graph_report judgement;
};

struct test_result {
  std::map<outcome, std::uint64_t> counts;
  std::set<outcome> allowed;
  std::uint64_t runs = 0;
  std::uint64_t forbidden = 0;           // runs whose outcome SC forbids
  std::uint64_t exists_observed = 0;     // runs that satisfied the exists condition
  std::uint64_t histories_checked = 0;   // runs whose history the graph checker judged
  std::uint64_t history_violations = 0;  // ... and found a cycle or a thin-air read in
  std::uint64_t unjudged = 0;            // ... or could not judge
  std::string first_violation;
  kept_run kept;  // the first forbidden run, else the first run satisfying exists, else run 0
};

// Collective: every node calls it with the same test and options; the result is complete
// on node 0 only. Throws iso::error (invalid_argument) when the test has more processes
// than the job has nodes, before anything is allocated.
test_result run_test(iso::node& node, const test& t, const run_options& options);

}  // namespace iso::litmus
