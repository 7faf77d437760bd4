// What the isotach benchmark drivers share: run a command and collect "key value..." result
// lines, summarise samples (median, min, max), and print rows of ours beside a peer's.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace iso::bench {

struct summary {
  double median = 0;
  double min = 0;
  double max = 0;
};

std::optional<summary> summarize(std::vector<double> samples);

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
