#include "apps/leq/leq_kernel.hpp"

#include <algorithm>
#include <cmath>

#include "apps/common/seeded_input.hpp"

namespace iso::apps::leq {

namespace {

// A double uniform in [0, 1) from the 53 high bits.
double unit(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

}  // namespace

std::vector<double> make_rows(std::size_t n, std::uint64_t seed, std::size_t first,
                              std::size_t count) {
  std::vector<double> rows(count * n);
  for (std::size_t r = 0; r < count; ++r) {
    const std::size_t i = first + r;
    double* row = rows.data() + r * n;
    double off = 0;
    for (std::size_t j = 0; j < n; ++j) {
      if (j == i) continue;
      // Each entry from its own position, so that any block of rows can be made alone.
      row[j] = unit(splitmix64(seed * 0x100000001b3ULL + i * n + j));
      off += row[j];
    }
    row[i] = 1.1 * off + 1.0;  // + 1: n = 1 has no off-diagonal entries
  }
  return rows;
}

std::vector<double> make_rhs(std::size_t n, std::uint64_t seed, std::size_t first,
                             std::size_t count) {
  const std::vector<double> rows = make_rows(n, seed, first, count);
  std::vector<double> b(count);
  for (std::size_t r = 0; r < count; ++r) {
    const double u = 2 * unit(splitmix64(~seed * 0x9e3779b97f4a7c15ULL + first + r)) - 1;
    b[r] = u * rows[r * n + first + r];
  }
  return b;
}

void iterate(std::span<const double> rows, std::span<const double> rhs, std::size_t first,
             std::span<const double> x, std::span<double> out) {
  const std::size_t n = x.size();
  for (std::size_t r = 0; r < out.size(); ++r) {
    const std::size_t i = first + r;
    const double* row = rows.data() + r * n;
    double sum = 0;
    for (std::size_t j = 0; j < i; ++j) sum += row[j] * x[j];
    for (std::size_t j = i + 1; j < n; ++j) sum += row[j] * x[j];
    out[r] = (rhs[r] - sum) / row[i];
  }
}

double max_change(std::span<const double> a, std::span<const double> b) {
  double most = 0;
  for (std::size_t i = 0; i < a.size(); ++i) most = std::max(most, std::abs(a[i] - b[i]));
  return most;
}

double residual(std::span<const double> rows, std::span<const double> rhs,
                std::span<const double> x) {
  const std::size_t n = x.size();
  double most = 0;
  for (std::size_t r = 0; r < rhs.size(); ++r) {
    double sum = 0;
    for (std::size_t j = 0; j < n; ++j) sum += rows[r * n + j] * x[j];
    most = std::max(most, std::abs(sum - rhs[r]));
  }
  return most;
}

solution solve(std::span<const double> a, std::span<const double> b, long max_iterations,
               double tolerance) {
  const std::size_t n = b.size();
  solution s;
  s.x.assign(n, 0.0);
  std::vector<double> next(n);
  while (s.iterations < max_iterations) {
    iterate(a, b, 0, s.x, next);
    s.last_change = max_change(s.x, next);
    s.x.swap(next);
    ++s.iterations;
    if (s.last_change < tolerance) break;
  }
  return s;
}

double tolerance_of(long digits) { return std::pow(10.0, -static_cast<double>(digits)); }

}  // namespace iso::apps::leq
