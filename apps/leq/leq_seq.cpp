// leq-seq: sequential Jacobi iteration for a seeded diagonally dominant system Ax = b, the
// reference for leq's speedup and check. The same kernel (leq_kernel.cpp) as the parallel
// version, no runtime.
//
//   leq-seq --n 2048 --check
#include <cmath>
#include <optional>
#include <vector>

#include "apps/common/command_line.hpp"
#include "apps/common/report.hpp"
#include "apps/leq/leq_kernel.hpp"

int main(int argc, char** argv) {
  using namespace iso::apps;
  long n = 512;
  long iterations = 10'000;
  long digits = 10;
  long seed = 1;
  bool check = false;
  command_line cli("leq-seq",
                   "sequential Jacobi iteration for a seeded diagonally dominant Ax = b");
  cli.add_count("--n", n, 1, 4096, "unknowns");
  cli.add_count("--iterations", iterations, 1, 1'000'000, "most iterations");
  cli.add_count("--digits", digits, 1, 15,
                "stop once no entry of x changes by 10^-digits or more in an iteration");
  cli.add_count("--seed", seed, 1, 1'000'000'000, "seed of the system");
  cli.add_switch("--check", check,
                 "check the residual |Ax - b| and print it (the parallel version compares x "
                 "with this run)");
  if (std::optional<int> status = cli.parse(argc, argv)) return *status;
  const auto size = static_cast<std::size_t>(n);
  const std::vector<double> a = leq::make_rows(size, static_cast<std::uint64_t>(seed), 0, size);
  const std::vector<double> b = leq::make_rhs(size, static_cast<std::uint64_t>(seed), 0, size);
  const stopwatch clock;
  const leq::solution s = leq::solve(a, b, iterations, leq::tolerance_of(digits));
  const double seconds = clock.seconds();
  print_size("leq-seq", format("%ld unknowns, seed %ld, %ld iterations", n, seed, s.iterations), 1);
  print_time("leq-seq", seconds, "iterations");
  if (!check) {
    print_check_skipped("leq-seq");
    return 0;
  }
  // Converged iterates solve the system to about the tolerance times the diagonal's size.
  const double r = leq::residual(a, b, s.x);
  const bool converged = s.last_change < leq::tolerance_of(digits);
  const bool passed = std::isfinite(r) && (!converged || r < 1e-6 * static_cast<double>(n));
  print_check("leq-seq",
              {passed, format("residual max |Ax - b| %.3g, last change %.3g, %s", r, s.last_change,
                              converged ? "converged" : "not converged")});
  return passed ? 0 : 1;
}
