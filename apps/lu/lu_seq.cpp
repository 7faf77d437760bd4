// lu-seq: the sequential blocked LU factorization, the reference for lu's speedup and
// check. The same kernel (lu_kernel.cpp) as the parallel version, no runtime.
//
//   lu-seq --n 1024 --block 32 --check
#include <optional>

#include "apps/common/command_line.hpp"
#include "apps/common/report.hpp"
#include "apps/lu/lu_kernel.hpp"

int main(int argc, char** argv) {
  using namespace iso::apps;
  long n = 256;
  long b = 32;
  long seed = 1;
  bool check = false;
  command_line cli("lu-seq", "sequential blocked LU factorization without pivoting");
  cli.add_count("--n", n, 1, 8192, "rows and columns of the matrix");
  cli.add_count("--block", b, 1, 512, "rows and columns of a block");
  cli.add_count("--seed", seed, 0, 1'000'000'000, "seed of the matrix");
  cli.add_switch("--check", check, "check ||LU - A|| / ||A||");
  if (std::optional<int> status = cli.parse(argc, argv)) return *status;
  if (n % b != 0) return cli.refuse(format("--n %ld is not a multiple of --block %ld", n, b));

  const auto size = static_cast<std::size_t>(n);
  const auto block = static_cast<std::size_t>(b);
  const std::size_t column_size = size * block;
  std::vector<double> matrix(size * size);
  for (std::size_t j = 0; j < size / block; ++j) {
    lu::make_block_column(static_cast<std::uint64_t>(seed), size, block, j,
                          std::span(matrix).subspan(j * column_size, column_size));
  }
  const std::vector<double> original = matrix;
  const stopwatch clock;
  lu::factor(matrix, size, block);
  const double seconds = clock.seconds();

  print_size("lu-seq", format("%ld x %ld, blocks of %ld x %ld", n, n, b, b), 1);
  print_time("lu-seq", seconds, "factorization");
  if (!check) {
    print_check_skipped("lu-seq");
    return 0;
  }
  const check_result result = lu::check_residual(matrix, original, size, block);
  print_check("lu-seq", result);
  return result.passed ? 0 : 1;
}
