// The pieces of the blocked LU factorization that the sequential and the parallel version
// share, so that both compute every element bit for bit alike.
//
// The n x n matrix is stored as nb x nb blocks of b x b doubles, each block contiguous
// (row-major inside), the blocks of one block column contiguous (SPLASH-2's "contiguous
// blocks" LU). Right-looking, no pivoting: for each k,
//   1. factor the diagonal block: A_kk = L_kk U_kk (L unit lower, U upper, in place);
//   2. the column panel: A_ik = A_ik U_kk^-1 (i > k);
//   3. the row panel: A_kj = L_kk^-1 A_kj (j > k);
//   4. the trailing matrix: A_ij -= A_ik A_kj (i, j > k).
// Steps 3 and 4 of block column j need only column panel k and column j itself, so an
// owner of whole block columns needs nothing but the column panel, once per k.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "apps/common/report.hpp"

namespace iso::apps::lu {

// A diagonally dominant matrix from `seed`: entries in [-1, 1), plus n on the diagonal, so
// the factorization needs no pivoting. Block column `j` (nb blocks of b x b).
void make_block_column(std::uint64_t seed, std::size_t n, std::size_t b, std::size_t j,
                       std::span<double> column);

// The four block kernels, on contiguous b x b blocks.
void factor_diagonal(std::span<double> a, std::size_t b);
void solve_upper(std::span<const double> diagonal, std::span<double> a, std::size_t b);
void solve_lower(std::span<const double> diagonal, std::span<double> a, std::size_t b);
void subtract_product(std::span<const double> left, std::span<const double> right,
                      std::span<double> a, std::size_t b);

// Steps 3 and 4 for block column `column` (blocks 0..nb-1) with column panel `panel`
// (blocks k..nb-1 of column k).
void update_column(std::span<const double> panel, std::span<double> column, std::size_t k,
                   std::size_t nb, std::size_t b);
// Steps 1 and 2 on block column k (blocks 0..nb-1).
void factor_column(std::span<double> column, std::size_t k, std::size_t nb, std::size_t b);

// The whole factorization, sequentially, of `matrix` (nb block columns, one after the
// other).
void factor(std::span<double> matrix, std::size_t n, std::size_t b);

// ||L U - A||_F / ||A||_F of a factored `lu` against the original `a`; passes below
// kResidualBound.
inline constexpr double kResidualBound = 1e-12;
[[nodiscard]] check_result check_residual(std::span<const double> lu, std::span<const double> a,
                                          std::size_t n, std::size_t b);

}  // namespace iso::apps::lu
