#include "apps/sor/sor_kernel.hpp"

#include <algorithm>
#include <cmath>

namespace iso::apps::sor {

void relax(std::span<double> grid, std::size_t n, std::size_t first_row, unsigned colour) {
  const std::size_t w = n + 2;
  const std::size_t rows = grid.size() / w - 2;
  for (std::size_t r = 1; r <= rows; ++r) {
    const std::size_t global = first_row + r - 1;
    double* row = &grid[r * w];
    const double* up = row - w;
    const double* down = row + w;
    for (std::size_t c = 1 + (global + 1 + colour) % 2; c <= n; c += 2) {
      const double around = up[c] + down[c] + row[c - 1] + row[c + 1];
      row[c] = (1 - kOmega) * row[c] + kOmega * 0.25 * around;
    }
  }
}

void set_edges(std::span<double> grid, std::size_t n) {
  std::fill(grid.begin(), grid.end(), 0.0);
  std::fill_n(grid.begin(), n + 2, 1.0);
}

void solve(std::span<double> grid, std::size_t n, long iterations) {
  for (long it = 0; it < iterations; ++it) {
    relax(grid, n, 1, 0);
    relax(grid, n, 1, 1);
  }
}

summary summarize(std::span<const double> grid, std::size_t n) {
  const std::size_t w = n + 2;
  summary s{0, 0};
  for (std::size_t r = 1; r <= n; ++r) {
    for (std::size_t c = 1; c <= n; ++c) {
      s.heat += grid[r * w + c];
      const double target = 0.25 * (grid[(r - 1) * w + c] + grid[(r + 1) * w + c] +
                                    grid[r * w + c - 1] + grid[r * w + c + 1]);
      s.residual = std::max(s.residual, std::abs(target - grid[r * w + c]));
    }
  }
  return s;
}

}  // namespace iso::apps::sor
