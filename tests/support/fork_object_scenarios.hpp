// Fork handing shared objects (iso/fork.hpp, Shared objects), run both in one process
// (tests/unit/runtime/fork_objects_test.cpp) and as a job of processes started by isorun
// (tests/multiproc/fork_job_test.cpp). Each scenario is collective: every node calls it.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <vector>

#include "iso/fork.hpp"
#include "iso/iso.hpp"
#include "iso/object.hpp"
#include "tests/support/object_types.hpp"

namespace iso::test {

inline constexpr int kForkRounds = 2;

// Registers "add_to" on `node` (once per node, before any fork): it increments the one
// object it is handed by its argument, after checking that it got the object its forker
// named.
inline void register_object_fork_procedures(iso::node& node) {
  iso::register_procedure<iso::object_id, std::int64_t>(
      node, "add_to",
      [](iso::node&, std::span<const iso::object> objects, iso::object_id expected,
         std::int64_t by) {
        if (objects.size() != 1 || objects[0].id() != expected) {
          throw iso::error(iso::error_code::internal, "add_to was handed the wrong objects");
        }
        iso::object counter = objects[0];
        (void)counter.call<std::int64_t>(int_ops::kInc, by);
      });
}

// What the workers of fork_adders_everywhere() add up to on `nodes` nodes.
inline std::int64_t forked_adders_total(std::int64_t nodes) {
  return kForkRounds * nodes * (nodes + 1) / 2;
}

// On the forking node: kForkRounds workers to every node, each handed `counter` and adding
// 1 + its target's id; joins them and awaits the total, which it returns.
inline std::int64_t fork_adders_everywhere(iso::node& node, iso::object& counter) {
  std::vector<iso::forked> workers;
  for (int round = 0; round < kForkRounds; ++round) {
    for (iso::node_id to = 0; to < node.count(); ++to) {
      workers.push_back(
          iso::fork(node, to, "add_to", {counter}, iso::pack(counter.id(), std::int64_t{to} + 1)));
    }
  }
  for (iso::forked& w : workers) w.join();
  return counter.read<std::int64_t>(int_ops::kAwait, forked_adders_total(node.count()));
}

// Orca's example with an object every node made: node 0 forks the adders while the others
// serve them, waiting in a barrier (SPMD; run_main_on_first stops serving for good, so a
// job that runs it runs this before); every node then sees the total on its own handle.
inline void workers_increment_the_forkers_object(iso::node& node, iso::object_placement placement) {
  const iso::object_type int_type = make_int_type();
  iso::object counter(node, int_type, {.placement = placement, .owner = node.count() - 1});
  if (node.id() == 0) {
    EXPECT_EQ(fork_adders_everywhere(node, counter), forked_adders_total(node.count()));
  }
  node.barrier();  // the other nodes serve their forks while they wait here
  EXPECT_EQ(counter.read<std::int64_t>(int_ops::kAwait, forked_adders_total(node.count())),
            forked_adders_total(node.count()))
      << "node " << node.id();
}

}  // namespace iso::test
