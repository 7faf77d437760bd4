// The pieces of all-pairs shortest paths (Floyd-Warshall) that the sequential and the
// parallel version share, so that both compute every distance alike.
//
// A seeded directed graph of n vertices: each edge present with probability 1/4, of
// whole-number weight 1 to 100; no edge is kInfinity. Distances are whole numbers, so the
// parallel and the sequential result are identical, not merely close. Iteration k relaxes
// every row i through vertex k: d[i][j] = min(d[i][j], d[i][k] + d[k][j]); row k itself does
// not change in iteration k (d[k][k] = 0), so its owner can hand it out before updating.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace iso::apps::asp {

// No path. Twice it still fits an int32, so sums need no overflow check.
inline constexpr std::int32_t kInfinity = 1 << 29;

// Rows [first_row, first_row + rows) of the n x n distance matrix of the graph of `seed`.
[[nodiscard]] std::vector<std::int32_t> make_rows(std::size_t n, std::uint64_t seed,
                                                  std::size_t first_row, std::size_t rows);

// Iteration k on `rows` (whole rows of n, row-major), given row k.
void relax(std::span<std::int32_t> rows, std::size_t n, std::span<const std::int32_t> row_k,
           std::size_t k);

// The sequential run: all n iterations on the whole matrix.
void solve(std::span<std::int32_t> d, std::size_t n);

// A digest of a distance matrix, and the number of pairs with a path: printed by both
// versions so that runs can be compared at a glance.
struct summary {
  std::uint64_t digest = 0;
  std::size_t connected = 0;
};
[[nodiscard]] summary summarize(std::span<const std::int32_t> d);

}  // namespace iso::apps::asp
