#include "comm/bench/bench_stats.hpp"

#include <algorithm>

namespace iso::bench {

std::optional<summary> summarize(std::vector<double> samples) {
  if (samples.empty()) return std::nullopt;
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  const double median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  return summary{median, samples.front(), samples.back()};
}

}  // namespace iso::bench
