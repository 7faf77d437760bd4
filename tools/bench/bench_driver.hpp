// What the isotach benchmark drivers share: run a command and collect "key value..." result
// lines, summarise samples (median, min, max), and print rows of ours beside a peer's.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "comm/bench/bench_stats.hpp"  // summary, summarize: one median for every bench
#include "iso/iso.hpp"

namespace iso::bench {

// Samples by key; a line "<key> <value>" adds value to samples[key]. Lines whose first
// word is not a key of interest are ignored.
using sample_table = std::map<std::string, std::vector<double>>;

// Runs `command` through the shell, adding its result lines to `into`; false when it could
// not run or exited non-zero (unless `tolerate_exit` is set).
bool collect(const std::string& command, sample_table& into, bool tolerate_exit = false);

// "0.512 [0.498-0.611]" or "-".
std::string cell(const std::optional<summary>& s, const char* format = "%.3f");

// Prints one row: label, ours, peer, ours/peer.
void print_row(const std::string& label, const std::optional<summary>& ours,
               const std::optional<summary>& peer);
void print_header(const char* ours_name, const char* peer_name);

// The directory of the running program (build/bin), for finding isorun and peers.
std::string program_directory();

// The command line every isotach benchmark takes: [--quick] [--nic thread|inline|auto]
// [--nodes N], plus --worker, which the driver adds when it starts the job.
struct bench_args {
  bool quick = false;
  bool as_worker = false;
  int nodes = 2;    // processes in the job (benchmarks that need exactly 2 check it)
  std::string nic;  // as given; empty when absent
  iso::nic_placement placement = iso::nic_placement::automatic;
};
// Prints "usage: <name> ..." and returns nullopt on anything else, including --nodes for a
// benchmark that measures exactly 2 nodes (`takes_nodes` false).
std::optional<bench_args> parse_bench_args(int argc, char** argv, const char* name,
                                           bool takes_nodes);

// Node 1's part while node 0 measures alone: polls (serving node 0's operations) until
// `done`, whose only copy is on this node, reaches `value`. set_done() is node 0's side.
void serve_until(iso::node& node, iso::shared_var<std::int64_t> done, std::int64_t value = 1);
void set_done(iso::node& node, iso::shared_var<std::int64_t> done, std::int64_t value = 1);

}  // namespace iso::bench

namespace iso::bench {

// The sample key of one figure of an indexed line: "<key>/<index>".
std::string indexed_key(const std::string& key, int index);

// Like collect(), but a line "<key> <index> <value>..." whose key is in `indexed_keys` (the
// peer's "shmem_p_quiet_k_us <k> <median> <min> <max>", one line per k) adds value to
// samples[indexed_key(key, index)]; every other line is taken as collect() takes it.
bool collect_indexed(const std::string& command, const std::vector<std::string>& indexed_keys,
                     sample_table& into, bool tolerate_exit = false);

}  // namespace iso::bench
