// Fork scenarios run both in one process (tests/unit/runtime/fork_test.cpp, nodes on
// threads) and as a job of processes started by isorun (tests/multiproc/fork_job_test.cpp).
// Each function is collective: every node of the job calls it.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "iso/iso.hpp"
#include "tests/support/test_support.hpp"

namespace iso::test {

// Where a square was computed shows in its thousands: it ran on the node it was forked to.
inline std::int64_t square_on(iso::node_id where, std::int64_t k) { return k * k + 1000 * where; }

// Registers the scenarios' procedures on `node` (once per node, before any fork).
inline void register_fork_procedures(iso::node& node) {
  iso::register_procedure<iso::shared_var<std::int64_t>, std::int64_t>(
      node, "square", [](iso::node& n, iso::shared_var<std::int64_t> out, std::int64_t k) {
        iso::isochron iso(n);
        iso.write(out, square_on(n.id(), k));
      });
  iso::register_procedure<iso::shared_var<std::int64_t>>(
      node, "add", [](iso::node& n, iso::shared_var<std::int64_t> counter) {
        iso::isochron iso(n);
        iso::value<std::int64_t> before = iso.fetch_add(counter, 1);
        iso.end();
        (void)before.get();  // waits: other fibers of the node run meanwhile
      });
  iso::register_procedure<>(node, "thrower",
                            [](iso::node&) { throw std::runtime_error("bad luck"); });
}

// Node 0 forks a square to every node and awaits them; everyone checks every result.
inline void fork_to_every_node_and_await_results(iso::node& node) {
  auto results = node.allocate<std::int64_t>(node.count());
  node.barrier();
  if (node.id() == 0) {
    std::vector<iso::forked> squares;
    for (iso::node_id to = 0; to < node.count(); ++to) {
      squares.push_back(
          iso::fork(node, to, "square", iso::pack(results[to], std::int64_t{to} + 2)));
      EXPECT_EQ(squares.back().target(), to);
    }
    for (iso::forked& f : squares) f.join();
  }
  node.barrier();  // the other nodes serve their forks while they wait here
  for (iso::node_id k = 0; k < node.count(); ++k) {
    EXPECT_EQ(read_alone(node, results[k]), square_on(k, std::int64_t{k} + 2)) << "node " << k;
  }
}

// Every error of fork comes back to the forking call, naming the procedure and the node;
// the target goes on.
inline void fork_errors_name_procedure_and_node(iso::node& node) {
  auto out = node.allocate<std::int64_t>(1)[0];
  node.barrier();
  const iso::node_id last = node.count() - 1;
  if (node.id() == 0) {
    expect_error(iso::error_code::invalid_argument, "the job has nodes", [&] {
      (void)iso::fork(node, node.count(), "square", iso::pack(out, std::int64_t{1}));
    });
    expect_error(iso::error_code::not_found, "no procedure 'nope' is registered on node",
                 [&] { (void)iso::fork(node, last, "nope"); });
    expect_error(iso::error_code::invalid_argument, "arguments of 4 bytes, but 'square' takes 16",
                 [&] { (void)iso::fork(node, last, "square", iso::pack(std::int32_t{3})); });
    expect_error(iso::error_code::invalid_argument, "other types than 'square' takes", [&] {
      (void)iso::fork(node, last, "square", iso::pack(std::uint64_t{1}, std::uint64_t{2}));
    });
    expect_error(iso::error_code::out_of_range, "fork of 'square'", [&] {
      const std::vector<std::byte> huge(iso::max_fork_arguments(node) + 1);
      (void)iso::fork(node, last, "square", huge);
    });
    const std::string thrown = "procedure 'thrower' forked to node " + std::to_string(last) +
                               " ended with an exception: bad luck";
    expect_error(iso::error_code::aborted, thrown.c_str(),
                 [&] { iso::fork(node, last, "thrower").join(); });
    iso::forked none;
    expect_error(iso::error_code::failed_precondition, "names no process", [&] { none.join(); });
    // The target went on: it still serves.
    iso::fork(node, last, "square", iso::pack(out, std::int64_t{5})).join();
  }
  expect_error(iso::error_code::already_exists, "'square' is registered on node", [&] {
    iso::register_procedure(node, "square", [](iso::node&, std::span<const std::byte>) {});
  });
  node.barrier();
  EXPECT_EQ(read_alone(node, out), square_on(last, 5));
}

// Orca's start: main runs on node 0 only and forks workers to every node (three each),
// which count in a shared variable; main awaits them and sees the total.
inline void orca_start_forks_workers_everywhere(iso::node& node) {
  auto counter = node.allocate<std::int64_t>(1)[0];
  bool ran_main = false;
  std::int64_t total = -1;
  iso::run_main_on_first(node, [&] {
    ran_main = true;
    std::vector<iso::forked> workers;
    for (int round = 0; round < 3; ++round) {
      for (iso::node_id to = 0; to < node.count(); ++to) {
        workers.push_back(iso::fork(node, to, "add", iso::pack(counter)));
      }
    }
    for (iso::forked& w : workers) w.join();
    total = read_alone(node, counter);
  });
  EXPECT_EQ(ran_main, node.id() == 0);
  if (node.id() == 0) {
    EXPECT_EQ(total, std::int64_t{3} * node.count());
  }
  EXPECT_EQ(read_alone(node, counter), std::int64_t{3} * node.count());
}

}  // namespace iso::test
