// tsp-seq: sequential branch-and-bound TSP, the reference for tsp's speedup and check. The
// same kernel (tsp_kernel.cpp) and the same jobs, searched in order, no runtime.
//
//   tsp-seq --cities 13 --check
#include <algorithm>
#include <cstdio>
#include <optional>
#include <vector>

#include "apps/common/command_line.hpp"
#include "apps/common/report.hpp"
#include "apps/tsp/tsp_kernel.hpp"

int main(int argc, char** argv) {
  using namespace iso::apps;
  long cities = 13;
  long depth = 3;
  long seed = 1;
  bool check = false;
  command_line cli("tsp-seq", "sequential branch-and-bound TSP on a seeded instance");
  cli.add_count("--cities", cities, 3, static_cast<long>(tsp::kMaxCities), "number of cities");
  cli.add_count("--depth", depth, 1, static_cast<long>(tsp::kMaxCities),
                "cities in a job's partial tour");
  cli.add_count("--seed", seed, 1, 1'000'000'000, "seed of the instance");
  cli.add_switch("--check", check,
                 "check that the tour found is a tour of the length found and, up to 10 cities, "
                 "that no order of the cities is shorter");
  if (std::optional<int> status = cli.parse(argc, argv)) return *status;
  if (depth > cities)
    return cli.refuse(format("--depth %ld is more than --cities %ld", depth, cities));

  const tsp::instance in =
      tsp::make_instance(static_cast<std::size_t>(cities), static_cast<std::uint64_t>(seed));
  const stopwatch clock;
  const std::vector<tsp::job> jobs = tsp::make_jobs(in, static_cast<std::size_t>(depth));
  // One more than the greedy tour, so that the search finds a tour even when that is optimal.
  std::int32_t best = tsp::greedy_length(in) + 1;
  std::vector<std::uint8_t> tour;
  for (const tsp::job& j : jobs) {
    std::vector<std::uint8_t> found;
    const std::int32_t length = tsp::search(in, j, best, &found);
    if (length < best) {
      best = length;
      tour = found;
    }
  }
  const double seconds = clock.seconds();
  print_size(
      "tsp-seq",
      format("%ld cities, %zu jobs of depth %ld, seed %ld", cities, jobs.size(), depth, seed), 1);
  print_time("tsp-seq", seconds, "search");
  std::printf("tsp-seq: shortest tour %d\n", best);
  if (!check) {
    print_check_skipped("tsp-seq");
    return 0;
  }
  check_result outcome{true, format("a tour of length %d", best)};
  if (!tsp::is_tour(in, tour, best)) {
    outcome = {false, format("the tour found does not have length %d", best)};
  } else if (in.cities <= tsp::kMaxExhaustiveCities) {
    const std::int32_t shortest = tsp::exhaustive_length(in);
    outcome =
        shortest == best
            ? check_result{true, format("a tour of length %d, the shortest of all tours", best)}
            : check_result{
                  false, format("the shortest of all tours has length %d, not %d", shortest, best)};
  }
  print_check("tsp-seq", outcome);
  return outcome.passed ? 0 : 1;
}
