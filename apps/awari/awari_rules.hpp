// The rules of Awari as the endgame databases use them, shared by the sequential and the
// parallel retrograde analysis (after Bal and Allis, "Parallel retrograde analysis on a
// distributed system").
//
// A board is 12 pits seen from the player to move: pits 0-5 are the mover's, 6-11 the
// opponent's, sown counter-clockwise (pit 5 is followed by pit 6, pit 11 by pit 0). A move
// takes every stone of one of the mover's non-empty pits and sows them one per pit into the
// following pits, skipping the emptied pit itself (which matters from 12 stones on). If the
// last stone lands in an opponent's pit that then holds 2 or 3 stones, the mover captures
// them, and the stones of the pits before it as long as they are the opponent's and hold
// 2 or 3 (a capture of all the opponent's stones is allowed). Then the opponent moves: the
// board after a move is returned turned around, from the opponent's side.
//
// A player with no stones on his side cannot move and the game ends: the other player takes
// the stones left. A game that goes on for ever ends with the stones left to nobody.
// Tournament rules differ in two points this analysis leaves out: there a player must leave
// the opponent stones to play if he can, and a move taking all of them captures nothing.
//
// A database layer holds the boards with exactly `stones` stones, each numbered by its rank:
// its place among all such boards in lexicographic order of the pits (pit 0 first). There
// are C(stones + 11, 11) of them.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace iso::apps::awari {

inline constexpr int kPits = 12;
inline constexpr int kSide = 6;  // pits per player
// The most stones a database is built for (the ranks of a layer fit in 32 bits well
// beyond it; the run time is the limit).
inline constexpr int kMaxStones = 16;

using board = std::array<std::uint8_t, kPits>;

// The number of boards with exactly `stones` stones.
[[nodiscard]] std::uint64_t layer_size(int stones);
[[nodiscard]] std::uint64_t rank_of(const board& b);
// The board of rank `rank` among those with `stones` stones (rank < layer_size(stones)).
[[nodiscard]] board board_of(int stones, std::uint64_t rank);
[[nodiscard]] int stones_of(const board& b);
// The board seen from the other side.
[[nodiscard]] board turned(const board& b);

// The outcome of sowing pit `pit` (0-5, not empty) of `b`: the board the opponent then
// moves on (turned) and the stones the mover captured.
struct move_result {
  board next;
  int captured = 0;
};
[[nodiscard]] move_result play(const board& b, int pit);

// Calls `visit(parent)` for every board whose mover reaches `b` (as the board `play` returns)
// by a move that captures nothing: the retrograde analysis's unmoves. Each (parent, pit)
// pair is visited once.
template <class Visit>
void for_each_parent(const board& b, Visit&& visit);

// "4 0 0 1 0 0 | 0 2 0 0 0 1": the mover's pits, then the opponent's.
[[nodiscard]] std::string show(const board& b);

// The pit after `pit` in sowing order when sowing from `origin` (which is skipped).
[[nodiscard]] inline int next_pit(int pit, int origin) {
  int next = pit + 1 == kPits ? 0 : pit + 1;
  if (next == origin) next = next + 1 == kPits ? 0 : next + 1;
  return next;
}

// A move from pit `origin` of the parent ended in `last`, leaving `count` stones there:
// whether it captured.
[[nodiscard]] inline bool captures(int last, int count) {
  return last >= kSide && (count == 2 || count == 3);
}

template <class Visit>
void for_each_parent(const board& b, Visit&& visit) {
  // The parent's mover is the one not to move at b: look from his side.
  const board child = turned(b);
  int total = 0;
  for (std::uint8_t c : child) total += c;
  for (int origin = 0; origin < kSide; ++origin) {
    // Sowing empties the origin (and skips it after a full round), so it is empty after.
    if (child[origin] != 0) continue;
    board parent = child;
    int last = origin;
    for (int sown = 1; sown <= total; ++sown) {
      last = next_pit(last, origin);
      if (parent[last] == 0) break;  // every later sowing takes a stone from here too
      --parent[last];
      if (captures(last, child[last])) continue;
      board found = parent;
      found[origin] = static_cast<std::uint8_t>(sown);
      visit(found);
    }
  }
}

}  // namespace iso::apps::awari
