// sor-seq: sequential red-black SOR, the reference for sor's speedup and check. The same
// kernel (sor_kernel.cpp) as the parallel version, no runtime.
//
//   sor-seq --n 1024 --iterations 200 --check
#include <cmath>
#include <optional>
#include <vector>

#include "apps/common/command_line.hpp"
#include "apps/common/report.hpp"
#include "apps/sor/sor_kernel.hpp"

int main(int argc, char** argv) {
  using namespace iso::apps;
  long n = 256;
  long iterations = 50;
  bool check = false;
  command_line cli("sor-seq", "sequential red-black SOR on an n x n grid, hot top edge");
  cli.add_count("--n", n, 2, 16384, "interior rows and columns");
  cli.add_count("--iterations", iterations, 1, 1'000'000, "red and black sweeps");
  cli.add_switch("--check", check,
                 "print the heat and the residual (the parallel version "
                 "compares with this run)");
  if (std::optional<int> status = cli.parse(argc, argv)) return *status;
  const auto size = static_cast<std::size_t>(n);
  std::vector<double> grid((size + 2) * (size + 2));
  sor::set_edges(grid, size);
  const stopwatch clock;
  sor::solve(grid, size, iterations);
  const double seconds = clock.seconds();
  print_size("sor-seq", format("%ld x %ld interior, %ld iterations", n, n, iterations), 1);
  print_time("sor-seq", seconds, "iterations");
  if (!check) {
    print_check_skipped("sor-seq");
    return 0;
  }
  const sor::summary s = sor::summarize(grid, size);
  const bool passed = std::isfinite(s.heat) && s.heat > 0;
  print_check("sor-seq", {passed, format("heat %.17g, residual %.3g", s.heat, s.residual)});
  return passed ? 0 : 1;
}
