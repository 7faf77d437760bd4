// Summaries of repeated benchmark runs: median and spread (min, max), because single runs
// on a shared 2-core machine mean little.
#pragma once

#include <optional>
#include <vector>

namespace iso::bench {

struct summary {
  double median = 0;
  double min = 0;
  double max = 0;
};

// None for no samples.
std::optional<summary> summarize(std::vector<double> samples);

}  // namespace iso::bench
