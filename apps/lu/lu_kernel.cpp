#include "apps/lu/lu_kernel.hpp"

#include <algorithm>
#include <cmath>

#include "apps/common/seeded_input.hpp"

namespace iso::apps::lu {
namespace {

// Element (i, j) of the n x n matrix in the blocked layout.
std::size_t at(std::size_t i, std::size_t j, std::size_t n, std::size_t b) {
  const std::size_t nb = n / b;
  return ((j / b) * nb + i / b) * b * b + (i % b) * b + j % b;
}

}  // namespace

void make_block_column(std::uint64_t seed, std::size_t n, std::size_t b, std::size_t j,
                       std::span<double> column) {
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t jj = 0; jj < b; ++jj) {
      const std::size_t col = j * b + jj;
      const std::uint64_t bits = splitmix64(seed * 0x100000001b3ULL + i * n + col);
      double v = static_cast<double>(bits >> 11) * 0x1.0p-52 - 1.0;
      if (i == col) v += static_cast<double>(n);
      column[(i / b) * b * b + (i % b) * b + jj] = v;
    }
  }
}

void factor_diagonal(std::span<double> a, std::size_t b) {
  for (std::size_t k = 0; k < b; ++k) {
    const double pivot = a[k * b + k];
    for (std::size_t i = k + 1; i < b; ++i) {
      const double l = a[i * b + k] / pivot;
      a[i * b + k] = l;
      for (std::size_t j = k + 1; j < b; ++j) a[i * b + j] -= l * a[k * b + j];
    }
  }
}

void solve_upper(std::span<const double> diagonal, std::span<double> a, std::size_t b) {
  // Row by row: x U = a, forward over the columns of U.
  for (std::size_t i = 0; i < b; ++i) {
    double* row = &a[i * b];
    for (std::size_t k = 0; k < b; ++k) {
      row[k] /= diagonal[k * b + k];
      const double x = row[k];
      for (std::size_t j = k + 1; j < b; ++j) row[j] -= x * diagonal[k * b + j];
    }
  }
}

void solve_lower(std::span<const double> diagonal, std::span<double> a, std::size_t b) {
  // L x = a with L unit lower: row k of x is final once the rows above are subtracted.
  for (std::size_t k = 0; k < b; ++k) {
    for (std::size_t i = k + 1; i < b; ++i) {
      const double l = diagonal[i * b + k];
      for (std::size_t j = 0; j < b; ++j) a[i * b + j] -= l * a[k * b + j];
    }
  }
}

void subtract_product(std::span<const double> left, std::span<const double> right,
                      std::span<double> a, std::size_t b) {
  for (std::size_t i = 0; i < b; ++i) {
    double* out = &a[i * b];
    for (std::size_t k = 0; k < b; ++k) {
      const double l = left[i * b + k];
      const double* r = &right[k * b];
      for (std::size_t j = 0; j < b; ++j) out[j] -= l * r[j];
    }
  }
}

void update_column(std::span<const double> panel, std::span<double> column, std::size_t k,
                   std::size_t nb, std::size_t b) {
  const std::size_t bb = b * b;
  std::span<double> top = column.subspan(k * bb, bb);
  solve_lower(panel.first(bb), top, b);
  for (std::size_t i = k + 1; i < nb; ++i) {
    subtract_product(panel.subspan((i - k) * bb, bb), top, column.subspan(i * bb, bb), b);
  }
}

void factor_column(std::span<double> column, std::size_t k, std::size_t nb, std::size_t b) {
  const std::size_t bb = b * b;
  std::span<double> diagonal = column.subspan(k * bb, bb);
  factor_diagonal(diagonal, b);
  for (std::size_t i = k + 1; i < nb; ++i) solve_upper(diagonal, column.subspan(i * bb, bb), b);
}

void factor(std::span<double> matrix, std::size_t n, std::size_t b) {
  const std::size_t nb = n / b;
  const std::size_t column_size = nb * b * b;
  for (std::size_t k = 0; k < nb; ++k) {
    std::span<double> panel_column = matrix.subspan(k * column_size, column_size);
    factor_column(panel_column, k, nb, b);
    const std::span<const double> panel = panel_column.subspan(k * b * b);
    for (std::size_t j = k + 1; j < nb; ++j) {
      update_column(panel, matrix.subspan(j * column_size, column_size), k, nb, b);
    }
  }
}

check_result check_residual(std::span<const double> lu, std::span<const double> a, std::size_t n,
                            std::size_t b) {
  double diff = 0;
  double norm = 0;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      // (L U)_ij = sum over k <= min(i, j) of L_ik U_kj, L_ii = 1.
      double sum = 0;
      const std::size_t last = std::min(i, j);
      for (std::size_t k = 0; k <= last; ++k) {
        const double l = k == i ? 1.0 : lu[at(i, k, n, b)];
        sum += l * lu[at(k, j, n, b)];
      }
      const double e = sum - a[at(i, j, n, b)];
      diff += e * e;
      norm += a[at(i, j, n, b)] * a[at(i, j, n, b)];
    }
  }
  const double residual = std::sqrt(diff / norm);
  if (!(residual < kResidualBound)) {
    return {false,
            format("||LU - A|| / ||A|| = %.3g, above the bound %.3g", residual, kResidualBound)};
  }
  return {true, format("||LU - A|| / ||A|| = %.3g (bound %.3g)", residual, kResidualBound)};
}

}  // namespace iso::apps::lu
