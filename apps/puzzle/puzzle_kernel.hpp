// The pieces of the 15-puzzle search (IDA*) that the sequential and the parallel version
// share, so that both search exactly the same tree in every round.
//
// A board is 16 cells of 4 bits (cell c in bits 4c..4c+3), tile 0 the blank; the goal has
// tile t in cell t - 1 and the blank in cell 15. A start board is the goal after a seeded
// random walk of the blank (no step undoing the one before), so it is solvable in at most
// that many moves. The heuristic is the Manhattan distance, so IDA* finds a shortest
// solution: round after round it searches, depth first, every path whose cost g plus
// heuristic h stays within a threshold, and raises the threshold to the smallest g + h
// that exceeded it, until a round reaches the goal; the threshold is then the length.
//
// A round is split into jobs: the tree expanded from the start down to a fixed depth (as the
// search would, pruned at the threshold), whose leaves are the jobs. Every job is searched
// fully (all shortest solutions are counted, not only the first), so the totals of a round
// (nodes visited, solutions, the next threshold) do not depend on the order of the jobs or
// on who searches them: the parallel version's totals equal the sequential one's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace iso::apps::puzzle {

inline constexpr int kSide = 4;
inline constexpr int kCells = kSide * kSide;
// No value yet (a threshold exceeded by nothing, a length not found).
inline constexpr std::int32_t kNone = 1 << 30;

struct board {
  std::uint64_t tiles = 0;
  std::int32_t blank = 0;  // the blank's cell
};

// A node of the search tree to search from: its board, its cost so far, its heuristic, and
// the cell the blank came from (-1: none), whose move back is not tried.
struct job {
  std::uint64_t tiles = 0;
  std::int32_t blank = 0;
  std::int32_t g = 0;
  std::int32_t h = 0;
  std::int32_t from = -1;
};

// What a search found: nodes visited, solutions reached within the threshold and the
// shortest of them, and the smallest g + h beyond the threshold.
struct tally {
  std::uint64_t nodes = 0;
  std::uint64_t solutions = 0;
  std::int32_t shortest = kNone;
  std::int32_t exceeded = kNone;
  void add(const tally& other);
};

[[nodiscard]] board goal();
// The goal after a seeded random walk of `moves` moves of the blank.
[[nodiscard]] board make_start(std::uint64_t seed, long moves);
[[nodiscard]] std::int32_t manhattan(const board& b);
// The board as 4 rows of tiles, "." for the blank.
[[nodiscard]] std::string show(const board& b);

// The jobs of the round with `threshold`: the leaves at `depth` (or the goal, if reached
// sooner) of the tree from `start`. The expansion's own nodes and the g + h values it
// pruned go to `expansion`.
[[nodiscard]] std::vector<job> make_jobs(const board& start, int depth, std::int32_t threshold,
                                         tally& expansion);

// Searches the tree below `j` within `threshold`. Calls `every_so_often` after each
// 4096 nodes (where a node of a parallel job serves the runtime), if it is not empty.
[[nodiscard]] tally search(const job& j, std::int32_t threshold,
                           const std::function<void()>& every_so_often = {});

// The sequential run: every round's jobs searched in order.
struct solution {
  std::int32_t length = kNone;  // kNone: none within the largest threshold tried
  std::uint64_t solutions = 0;
  std::uint64_t nodes = 0;
  int rounds = 0;
};
// The largest threshold a run tries: a walk of up to 200 moves needs no more.
inline constexpr std::int32_t kMaxThreshold = 200;
[[nodiscard]] solution solve(const board& start, int depth);

}  // namespace iso::apps::puzzle
