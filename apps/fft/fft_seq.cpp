// fft-seq: the sequential six-step FFT, the reference for fft's speedup and check. The
// same kernel (fft_kernel.cpp) as the parallel version, on plain arrays, no runtime.
//
//   fft-seq --m 20 --check
#include <cstdio>

#include "apps/common/command_line.hpp"
#include "apps/common/report.hpp"
#include "apps/fft/fft_check.hpp"
#include "apps/fft/fft_kernel.hpp"

int main(int argc, char** argv) {
  using namespace iso::apps;
  long m = 16;
  long seed = 1;
  bool check = false;
  command_line cli("fft-seq", "sequential 1-D complex FFT of 2^m points, forward then inverse");
  cli.add_count("--m", m, 2, 26, "log2 of the number of points");
  cli.add_count("--seed", seed, 0, 1'000'000'000, "seed of the input");
  cli.add_switch("--check", check, "check the round trip and the checksum");
  if (std::optional<int> status = cli.parse(argc, argv)) return *status;

  const fft::shape s = fft::shape_of(static_cast<unsigned>(m));
  const std::size_t n = s.rows * s.cols;
  const std::vector<fft::cplx> x = fft::make_input(static_cast<std::uint64_t>(seed), 0, n);
  // Buffers are allocated and touched before the clock starts, as in the parallel version.
  std::vector<fft::cplx> forward(n);
  std::vector<fft::cplx> back(n);
  std::vector<fft::cplx> in(n);
  std::vector<fft::cplx> scratch(n);
  const stopwatch clock;
  fft::six_step(x, s.rows, s.cols, forward, scratch);
  fft::inverse_six_step(forward, s.rows, s.cols, back, in, scratch);
  const double seconds = clock.seconds();

  print_size("fft-seq", format("2^%ld points (%zu x %zu)", m, s.rows, s.cols), 1);
  print_time("fft-seq", seconds, "forward and inverse");
  if (!check) {
    print_check_skipped("fft-seq");
    return 0;
  }
  const check_result result = fft::check_round_trip(x, forward, back);
  print_check("fft-seq", result);
  return result.passed ? 0 : 1;
}
