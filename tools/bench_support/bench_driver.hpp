// The driver side of every benchmark (comm-bench and the isotach benchmarks): start a
// measuring job with a shell command, collect the result lines its workers print, and print
// rows of our figure beside a peer's.
//
//   iso::bench::sample_table samples;
//   if (!iso::bench::collect_indexed("isorun -n 2 -- worker", {"lat"}, samples)) return 1;
//   auto ours = iso::bench::summarize(samples[iso::bench::indexed_key("lat", 8)]);
//
// Depends on nothing of the project, so that programs of any layer may use it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tools/bench_support/bench_stats.hpp"

namespace iso::bench {

// Samples by key; a line "<key> <value>" adds value to samples[key]. Lines whose first
// word is not a key of interest are ignored.
using sample_table = std::map<std::string, std::vector<double>>;

// Runs `command` through the shell, adding its result lines to `into`; false when it could
// not run or exited non-zero (unless `tolerate_exit` is set). Blocks until it ends.
bool collect(const std::string& command, sample_table& into, bool tolerate_exit = false);

// The sample key of one figure of an indexed line: "<key>/<index>".
std::string indexed_key(const std::string& key, int index);

// Like collect(), but a line "<key> <index> <value>..." whose key is in `indexed_keys` (the
// OpenSHMEM peer's "shmem_p_quiet_k_us <k> <median> <min> <max>", or a size in bytes) adds
// value to samples[indexed_key(key, index)]; every other line is taken as collect() takes it.
bool collect_indexed(const std::string& command, const std::vector<std::string>& indexed_keys,
                     sample_table& into, bool tolerate_exit = false);

// Prints one row: label, ours, peer, ours/peer.
void print_row(const std::string& label, const std::optional<summary>& ours,
               const std::optional<summary>& peer);
void print_header(const char* ours_name, const char* peer_name);

// The directory of the running program (build/bin), for finding isorun and peers.
std::string program_directory();

}  // namespace iso::bench
