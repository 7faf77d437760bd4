// Summaries of repeated benchmark runs: median and spread (min, max), because single runs
// on a shared 2-core machine mean little. Used by every benchmark driver (comm-bench and the
// isotach benchmarks), so that all of them compute and print a figure the same way.
//
//   std::optional<iso::bench::summary> s = iso::bench::summarize({0.51, 0.49, 0.62});
//   std::printf("%s\n", iso::bench::cell(s).c_str());  // "0.510 [0.490-0.620]"
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace iso::bench {

struct summary {
  double median = 0;
  double min = 0;
  double max = 0;
};

// None for no samples.
std::optional<summary> summarize(std::vector<double> samples);

// "0.512 [0.498-0.611]", each figure printed with `format` (one printf conversion of a
// double, e.g. "%.3f"); "-" for no summary or a format that is not one such conversion.
std::string cell(const std::optional<summary>& s, const char* format = "%.3f");

}  // namespace iso::bench
