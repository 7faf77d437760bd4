// What the isotach benchmarks share beyond the driver (tools/bench_support): their command
// line, and the loop of a node that serves while another measures. Included by every
// program in tools/bench, so it brings the driver's and the statistics' declarations along.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "iso/iso.hpp"
#include "tools/bench_support/bench_driver.hpp"
#include "tools/bench_support/bench_stats.hpp"

namespace iso::bench {

// The command line every isotach benchmark takes: [--quick] [--nic thread|inline|auto]
// [--nodes N], plus --worker, which the driver adds when it starts the job.
struct bench_args {
  bool quick = false;
  bool as_worker = false;
  int nodes = 2;    // processes in the job (benchmarks that need exactly 2 check it)
  std::string nic;  // as given; empty when absent
  iso::nic_mode mode = iso::nic_mode::automatic;
};
// Prints "usage: <name> ..." and returns nullopt on anything else, including --nodes for a
// benchmark that measures exactly 2 nodes (`takes_nodes` false).
std::optional<bench_args> parse_bench_args(int argc, char** argv, const char* name,
                                           bool takes_nodes);

// Node 1's part while node 0 measures alone: polls (serving node 0's operations) until
// `done`, whose only copy is on this node, reaches `value`. set_done() is node 0's side.
void serve_until(iso::node& node, iso::shared_var<std::int64_t> done, std::int64_t value = 1);
void set_done(iso::node& node, iso::shared_var<std::int64_t> done, std::int64_t value = 1);

// The OpenSHMEM peer (iso-shmem-peer, run by run_shmem_peer.sh beside the drivers in `bin`):
// whether it was built, and one run of it into `peer` (its failures are tolerated: a crash
// at its end keeps the lines it printed). With `pes` other than 2 the peer measures only
// the counter that every PE increments (shmem_atomic_fadd_all_us/<pes>).
[[nodiscard]] bool shmem_peer_built(const std::string& bin);
void collect_shmem_peer(const std::string& bin, bool quick, sample_table& peer, int pes = 2);

}  // namespace iso::bench
