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
// whether it was built, and one run of it on `pes` PEs into `peer` (its failures are
// tolerated: a crash at its end keeps the lines it printed).
[[nodiscard]] bool shmem_peer_built(const std::string& bin);
void collect_shmem_peer(const std::string& bin, bool quick, sample_table& peer, int pes = 2);
// The same with the peer's sized figures too (--sizes: shmem_getmem_us and
// shmem_putmem_quiet_us by bytes, under indexed_key(key, bytes)).
void collect_shmem_peer_sizes(const std::string& bin, bool quick, sample_table& peer);

// The command that runs the Open MPI peer `program` (built beside the drivers in `bin`) on
// `ranks` ranks with `args`, or none when the peer or mpirun is missing. Every peer runs
// with comm-bench's options: shared memory (vader) without the single-copy mechanism,
// which containers often forbid and which then costs the peer ~3x at small sizes, and
// --oversubscribe, so that a machine with fewer cores than ranks still runs it. As root,
// it also tells Open MPI (twice, as it asks) that running as root is meant.
[[nodiscard]] std::optional<std::string> mpi_peer_command(const std::string& bin,
                                                          const char* program, int ranks,
                                                          const std::string& args = "");
// The same peer with Open MPI's UCX messaging layer (pml ucx) instead, for comparisons with
// the project's ucx fabric over the lanes UCX picks (UCX_TLS, when set, reaches the ranks).
[[nodiscard]] std::optional<std::string> mpi_ucx_peer_command(const std::string& bin,
                                                              const char* program, int ranks,
                                                              const std::string& args = "");

}  // namespace iso::bench
