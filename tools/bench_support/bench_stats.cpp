#include "tools/bench_support/bench_stats.hpp"

#include <algorithm>
#include <memory>

#include "absl/strings/str_format.h"

namespace iso::bench {

std::optional<summary> summarize(std::vector<double> samples) {
  if (samples.empty()) return std::nullopt;
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  const double median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  return summary{median, samples.front(), samples.back()};
}

std::string cell(const std::optional<summary>& s, const char* format) {
  if (!s) return "-";
  // Parsed at run time: the callers' formats are not string literals the compiler can check.
  const std::unique_ptr<absl::ParsedFormat<'f'>> f = absl::ParsedFormat<'f'>::New(format);
  if (f == nullptr) return "-";
  return absl::StrFormat("%s [%s-%s]", absl::StrFormat(*f, s->median), absl::StrFormat(*f, s->min),
                         absl::StrFormat(*f, s->max));
}

}  // namespace iso::bench
