#include "apps/puzzle/puzzle_kernel.hpp"

#include <algorithm>
#include <cstdlib>

#include "apps/common/seeded_input.hpp"

namespace iso::apps::puzzle {

namespace {

int tile_at(std::uint64_t tiles, int cell) { return static_cast<int>((tiles >> (4 * cell)) & 0xf); }

// Distance of tile t (1..15) in `cell` from its goal cell t - 1.
int distance(int t, int cell) {
  const int home = t - 1;
  return std::abs(home / kSide - cell / kSide) + std::abs(home % kSide - cell % kSide);
}

// The cells the blank in `cell` can move to; returns how many.
int neighbours(int cell, int (&out)[4]) {
  int count = 0;
  if (cell >= kSide) out[count++] = cell - kSide;
  if (cell % kSide > 0) out[count++] = cell - 1;
  if (cell % kSide < kSide - 1) out[count++] = cell + 1;
  if (cell < kCells - kSide) out[count++] = cell + kSide;
  return count;
}

// The blank moves from `j.blank` into `to`.
job moved(const job& j, int to) {
  const int t = tile_at(j.tiles, to);
  const std::uint64_t tiles = (j.tiles & ~(std::uint64_t{0xf} << (4 * to))) |
                              (static_cast<std::uint64_t>(t) << (4 * j.blank));
  return {tiles, to, j.g + 1, j.h - distance(t, to) + distance(t, j.blank), j.blank};
}

void note_exceeded(tally& t, std::int32_t f) { t.exceeded = std::min(t.exceeded, f); }

void note_solution(tally& t, std::int32_t g) {
  ++t.solutions;
  t.shortest = std::min(t.shortest, g);
}

struct searcher {
  std::int32_t threshold;
  const std::function<void()>& every_so_often;
  tally found;

  void visit(const job& j) {
    ++found.nodes;
    if ((found.nodes & 4095) == 0 && every_so_often) every_so_often();
    if (j.h == 0) {
      note_solution(found, j.g);
      return;
    }
    int next[4];
    const int count = neighbours(j.blank, next);
    for (int i = 0; i < count; ++i) {
      if (next[i] == j.from) continue;
      const job child = moved(j, next[i]);
      if (child.g + child.h > threshold) {
        note_exceeded(found, child.g + child.h);
      } else {
        visit(child);
      }
    }
  }
};

void expand(const job& j, int depth, std::int32_t threshold, tally& expansion,
            std::vector<job>& jobs) {
  if (j.g == depth || j.h == 0) {
    jobs.push_back(j);
    return;
  }
  ++expansion.nodes;
  int next[4];
  const int count = neighbours(j.blank, next);
  for (int i = 0; i < count; ++i) {
    if (next[i] == j.from) continue;
    const job child = moved(j, next[i]);
    if (child.g + child.h > threshold) {
      note_exceeded(expansion, child.g + child.h);
    } else {
      expand(child, depth, threshold, expansion, jobs);
    }
  }
}

}  // namespace

void tally::add(const tally& other) {
  nodes += other.nodes;
  solutions += other.solutions;
  shortest = std::min(shortest, other.shortest);
  exceeded = std::min(exceeded, other.exceeded);
}

board goal() {
  board b;
  for (int c = 0; c < kCells - 1; ++c) b.tiles |= static_cast<std::uint64_t>(c + 1) << (4 * c);
  b.blank = kCells - 1;
  return b;
}

board make_start(std::uint64_t seed, long moves) {
  job j{goal().tiles, kCells - 1, 0, 0, -1};
  for (long m = 0; m < moves; ++m) {
    int next[4];
    int count = 0;
    int all[4];
    const int n = neighbours(j.blank, all);
    for (int i = 0; i < n; ++i) {
      if (all[i] != j.from) next[count++] = all[i];
    }
    const std::uint64_t bits = splitmix64(seed * 0x100000001b3ULL + static_cast<std::uint64_t>(m));
    j = moved(j, next[bits % static_cast<std::uint64_t>(count)]);
  }
  return {j.tiles, j.blank};
}

std::int32_t manhattan(const board& b) {
  std::int32_t h = 0;
  for (int c = 0; c < kCells; ++c) {
    const int t = tile_at(b.tiles, c);
    if (t != 0) h += distance(t, c);
  }
  return h;
}

std::string show(const board& b) {
  std::string s;
  for (int c = 0; c < kCells; ++c) {
    const int t = tile_at(b.tiles, c);
    if (c % kSide == 0 && c != 0) s += " /";
    const std::string cell = t == 0 ? "." : std::to_string(t);
    s += std::string(3 - cell.size(), ' ') + cell;
  }
  return s;
}

std::vector<job> make_jobs(const board& start, int depth, std::int32_t threshold,
                           tally& expansion) {
  std::vector<job> jobs;
  const job root{start.tiles, start.blank, 0, manhattan(start), -1};
  if (root.h > threshold) {
    note_exceeded(expansion, root.h);
    return jobs;
  }
  expand(root, depth, threshold, expansion, jobs);
  return jobs;
}

tally search(const job& j, std::int32_t threshold, const std::function<void()>& every_so_often) {
  searcher s{threshold, every_so_often, {}};
  s.visit(j);
  return s.found;
}

solution solve(const board& start, int depth) {
  solution s;
  std::int32_t threshold = manhattan(start);
  while (threshold <= kMaxThreshold) {
    ++s.rounds;
    tally round;
    for (const job& j : make_jobs(start, depth, threshold, round)) round.add(search(j, threshold));
    s.nodes += round.nodes;
    if (round.solutions > 0) {
      s.length = round.shortest;
      s.solutions = round.solutions;
      break;
    }
    threshold = round.exceeded;
  }
  return s;
}

}  // namespace iso::apps::puzzle
