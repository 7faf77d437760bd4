// asp-seq: sequential all-pairs shortest paths (Floyd-Warshall), the reference for asp's
// speedup and check. The same kernel (asp_kernel.cpp) as the parallel version, no runtime.
//
//   asp-seq --n 512 --check
#include <optional>
#include <vector>

#include "apps/asp/asp_kernel.hpp"
#include "apps/common/command_line.hpp"
#include "apps/common/report.hpp"

int main(int argc, char** argv) {
  using namespace iso::apps;
  long n = 512;
  long seed = 1;
  bool check = false;
  command_line cli("asp-seq", "sequential all-pairs shortest paths (Floyd) on a seeded graph");
  cli.add_count("--n", n, 1, 8192, "vertices");
  cli.add_count("--seed", seed, 1, 1'000'000'000, "seed of the graph");
  cli.add_switch("--check", check,
                 "check that no distance got longer and print the digest (the parallel "
                 "version compares with this run)");
  if (std::optional<int> status = cli.parse(argc, argv)) return *status;
  const auto size = static_cast<std::size_t>(n);
  std::vector<std::int32_t> d = asp::make_rows(size, static_cast<std::uint64_t>(seed), 0, size);
  const std::vector<std::int32_t> input = d;
  const stopwatch clock;
  asp::solve(d, size);
  const double seconds = clock.seconds();
  print_size("asp-seq", format("%ld vertices, seed %ld", n, seed), 1);
  print_time("asp-seq", seconds, "iterations");
  if (!check) {
    print_check_skipped("asp-seq");
    return 0;
  }
  // A shortest path is never longer than the direct edge, and d[i][i] stays 0.
  check_result outcome{true, ""};
  for (std::size_t i = 0; outcome.passed && i < d.size(); ++i) {
    const bool diagonal = i / size == i % size;
    if (d[i] > input[i] || (diagonal && d[i] != 0)) {
      outcome = {false, format("distance %zu -> %zu is %d, the edge was %d", i / size, i % size,
                               d[i], input[i])};
    }
  }
  if (outcome.passed) {
    const asp::summary s = asp::summarize(d);
    outcome.detail = format("%zu connected pairs, digest %016llx", s.connected,
                            static_cast<unsigned long long>(s.digest));
  }
  print_check("asp-seq", outcome);
  return outcome.passed ? 0 : 1;
}
