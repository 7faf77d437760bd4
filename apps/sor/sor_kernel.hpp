// The pieces of red-black SOR that the sequential and the parallel version share, so that
// both compute every cell bit for bit alike.
//
// Laplace's equation on an (n + 2) x (n + 2) grid: the top edge held at 1, the other
// edges at 0, the n x n interior relaxed by successive over-relaxation in red-black order
// (cells with (i + j) even, then odd), a fixed number of iterations. A cell of one colour
// depends only on cells of the other, so the order within a colour is free, and a node
// that owns a block of rows needs only the rows just above and below its block.
#pragma once

#include <cstddef>
#include <span>

#include "apps/common/report.hpp"

namespace iso::apps::sor {

inline constexpr double kOmega = 1.5;

// Rows of `grid` (row-major, n + 2 wide): row 0 and the last are ghost or edge rows; the
// rows between are global rows first_row, first_row + 1, ... of the grid. Relaxes the
// cells of `colour` (0 red, 1 black) in those rows, columns 1..n.
void relax(std::span<double> grid, std::size_t n, std::size_t first_row, unsigned colour);

// The edge values: row 0 (the top edge) is 1, everything else 0.
void set_edges(std::span<double> grid, std::size_t n);

// The sequential run: `iterations` red and black sweeps of the whole grid.
void solve(std::span<double> grid, std::size_t n, long iterations);

// The interior's total (the "heat", which the hot edge feeds) and the largest change one
// more sweep would make (how far from converged), the numbers the apps print.
struct summary {
  double heat;
  double residual;
};
[[nodiscard]] summary summarize(std::span<const double> grid, std::size_t n);

}  // namespace iso::apps::sor
