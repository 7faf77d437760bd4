#include "apps/fft/fft_check.hpp"

#include <algorithm>
#include <cmath>

namespace iso::apps::fft {

std::vector<cplx> make_input(std::uint64_t seed, std::size_t first, std::size_t count) {
  std::vector<cplx> x(count);
  for (std::size_t j = 0; j < count; ++j) x[j] = input_point(seed, first + j);
  return x;
}

check_result check_round_trip(std::span<const cplx> x, std::span<const cplx> forward,
                              std::span<const cplx> back) {
  double scale = 0;
  double error = 0;
  std::size_t worst = 0;
  for (std::size_t j = 0; j < x.size(); ++j) {
    scale = std::max(scale, std::abs(x[j]));
    const double e = std::abs(back[j] - x[j]);
    if (e > error) {
      error = e;
      worst = j;
    }
  }
  cplx sum = 0;
  for (const cplx& v : forward) sum += v;
  const cplx expected = static_cast<double>(x.size()) * x[0];
  // Summing n values of size up to sqrt(n) rounds by about n * eps * sqrt(n).
  const double n = static_cast<double>(x.size());
  const double checksum_error = std::abs(sum - expected) / (n * std::sqrt(n) * scale);
  if (error > kRoundTripBound * scale) {
    return {false, format("inverse(forward(x)) differs from x at point %zu by %.3g (bound %.3g)",
                          worst, error, kRoundTripBound * scale)};
  }
  if (checksum_error > 1e-12) {
    return {false,
            format("checksum: sum of X is (%.17g, %.17g), expected n * x[0] = (%.17g, %.17g)",
                   sum.real(), sum.imag(), expected.real(), expected.imag())};
  }
  return {true, format("max error after inverse %.3g; checksum sum X = n*x[0] = (%.6f, %.6f)",
                       error, sum.real(), sum.imag())};
}

check_result compare_exactly(std::span<const cplx> got, std::span<const cplx> want,
                             const std::string& what) {
  for (std::size_t k = 0; k < want.size(); ++k) {
    if (!identical(got[k].real(), want[k].real()) || !identical(got[k].imag(), want[k].imag())) {
      return {false, format("first difference from the sequential %s at point %zu: (%.17g, %.17g) "
                            "!= (%.17g, %.17g)",
                            what.c_str(), k, got[k].real(), got[k].imag(), want[k].real(),
                            want[k].imag())};
    }
  }
  return {true, "identical to the sequential " + what};
}

}  // namespace iso::apps::fft
