// puzzle-seq: sequential IDA* on a seeded 15-puzzle, the reference for puzzle's speedup and
// check. The same kernel (puzzle_kernel.cpp) as the parallel version, no runtime.
//
//   puzzle-seq --moves 60 --check
#include <optional>

#include "apps/common/command_line.hpp"
#include "apps/common/report.hpp"
#include "apps/puzzle/puzzle_kernel.hpp"

int main(int argc, char** argv) {
  using namespace iso::apps;
  long moves = 50;
  long depth = 6;
  long seed = 1;
  bool check = false;
  command_line cli("puzzle-seq", "sequential IDA* on a seeded 15-puzzle");
  cli.add_count("--moves", moves, 1, 200, "length of the random walk that makes the start");
  cli.add_count("--depth", depth, 1, 20, "depth at which a round's tree is cut into jobs");
  cli.add_count("--seed", seed, 1, 1'000'000'000, "seed of the walk");
  cli.add_switch("--check", check,
                 "check that a solution was found, no longer than the walk (the parallel "
                 "version compares with this run)");
  if (std::optional<int> status = cli.parse(argc, argv)) return *status;
  const puzzle::board start = puzzle::make_start(static_cast<std::uint64_t>(seed), moves);
  const stopwatch clock;
  const puzzle::solution s = puzzle::solve(start, static_cast<int>(depth));
  const double seconds = clock.seconds();
  print_size("puzzle-seq",
             format("walk of %ld moves, seed %ld (%s), jobs at depth %ld", moves, seed,
                    puzzle::show(start).c_str(), depth),
             1);
  print_time("puzzle-seq", seconds, "search");
  if (!check) {
    print_check_skipped("puzzle-seq");
    return 0;
  }
  const bool passed = s.length <= moves && s.solutions > 0;
  print_check("puzzle-seq", {passed, format("shortest solution %d moves, %llu of them, %llu "
                                            "nodes in %d rounds",
                                            s.length, static_cast<unsigned long long>(s.solutions),
                                            static_cast<unsigned long long>(s.nodes), s.rounds)});
  return passed ? 0 : 1;
}
