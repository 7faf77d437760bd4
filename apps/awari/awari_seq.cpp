// awari-seq: the sequential retrograde analysis of the Awari endgame databases, the
// reference for awari's speedup and check. The same analysis (awari_analysis.cpp) as the
// parallel version, in one part, no runtime.
//
//   awari-seq --stones 8 --check
#include <optional>
#include <string>

#include "apps/awari/awari_analysis.hpp"
#include "apps/common/command_line.hpp"
#include "apps/common/report.hpp"

int main(int argc, char** argv) {
  using namespace iso::apps;
  long stones = 6;
  bool check = false;
  command_line cli("awari-seq",
                   "sequential retrograde analysis of the Awari databases up to a number of "
                   "stones");
  cli.add_count("--stones", stones, 1, awari::kMaxStones, "the most stones on a board");
  cli.add_switch("--check", check,
                 "check that every value is its board's best move's outcome (the parallel "
                 "version compares with this run)");
  if (std::optional<int> status = cli.parse(argc, argv)) return *status;
  const stopwatch clock;
  const awari::database db = awari::solve(static_cast<int>(stones));
  const double seconds = clock.seconds();
  print_size("awari-seq", format("boards with up to %ld stones", stones), 1);
  print_time("awari-seq", seconds, "analysis");
  if (!check) {
    print_check_skipped("awari-seq");
    return 0;
  }
  const std::string wrong = awari::first_inconsistency(db);
  print_check("awari-seq", {wrong.empty(), wrong.empty() ? awari::describe(db) : wrong});
  return wrong.empty() ? 0 : 1;
}
