// The pieces of the Jacobi solver that the sequential and the parallel version share, so
// that both compute every entry of x bit for bit alike.
//
// A seeded n x n system Ax = b: off-diagonal entries uniform in [0, 1), each diagonal entry
// 1.1 times the sum of its row's off-diagonal entries (strictly diagonally dominant, so
// Jacobi converges, by about a factor 1/1.1 per iteration whatever n is), and b[i] uniform
// in [-1, 1) times A[i][i]. Jacobi: x'[i] = (b[i] - sum over j != i of A[i][j] x[j]) / A[i][i],
// from x = 0, the sum taken in the order j = 0, 1, ..., so a node that computes rows
// [first, first + count) from the whole of x gets exactly the entries the sequential run
// gets. The run stops after the first iteration whose largest change of an entry is below
// the tolerance, or after the most iterations allowed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace iso::apps::leq {

// Rows [first, first + count) of A (row-major, n wide), and the same entries of b.
[[nodiscard]] std::vector<double> make_rows(std::size_t n, std::uint64_t seed, std::size_t first,
                                            std::size_t count);
[[nodiscard]] std::vector<double> make_rhs(std::size_t n, std::uint64_t seed, std::size_t first,
                                           std::size_t count);

// One Jacobi iteration of rows [first, first + out.size()): `rows` and `rhs` are those rows
// of A and entries of b, `x` the whole previous iterate; the new entries go to `out`.
void iterate(std::span<const double> rows, std::span<const double> rhs, std::size_t first,
             std::span<const double> x, std::span<double> out);

// The largest |a[i] - b[i]|: what the stopping rule compares with the tolerance.
[[nodiscard]] double max_change(std::span<const double> a, std::span<const double> b);

// The largest |(Ax - b)[i]| over the given rows (as above): how well x solves the system.
[[nodiscard]] double residual(std::span<const double> rows, std::span<const double> rhs,
                              std::span<const double> x);

// The sequential run on the whole system: the final x and the iterations it took.
struct solution {
  std::vector<double> x;
  long iterations = 0;
  double last_change = 0;
};
[[nodiscard]] solution solve(std::span<const double> a, std::span<const double> b,
                             long max_iterations, double tolerance);

// 10^-digits, the tolerance of --digits.
[[nodiscard]] double tolerance_of(long digits);

}  // namespace iso::apps::leq
