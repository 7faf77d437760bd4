// The retrograde analysis of one Awari database layer, shared by the sequential and the
// parallel version (the sequential one is the same analysis with a single part).
//
// A board's value is what its mover can make sure of: the stones he will capture minus
// those his opponent will, of the stones on the board, with the best play of both (see
// awari_rules.hpp for the rules and the end of a game). A move that captures leads to a
// layer with fewer stones, whose values are known (the layers are built from 0 stones up):
// its outcome for the mover is the stones taken minus the value of the board after it. A
// move that captures nothing stays in the layer, and the game may cycle there for ever.
//
// So each layer is solved as a set of win/loss analyses, one per threshold T = 1..stones:
// "the mover can make sure of at least T" (won at T) holds when a capturing move gives at
// least T, or a move reaches a board lost at T for the opponent; "the mover can get no more
// than -T" (lost at T) holds when no capturing move gives more than -T and every move
// that captures nothing reaches a board won at T for the opponent. From the boards the
// capturing moves decide, the analysis goes backwards by unmoves: a board lost at T makes
// every parent won at T; a board won at T counts down, in each parent, the moves not yet
// known to lose, and a parent with none left (and no capturing move out) is lost at T.
// What is neither at the end is a cycle that neither side can leave with profit. The value
// is the largest T won at, or minus the largest T lost at, or 0. The outcome does not depend
// on the order in which the facts arrive, so any split of the work gives the same layer.
//
// The layer's boards are split into parts by rank (board r belongs to part r mod parts:
// neighbours in the game are scattered, so the parts get work alike). What one part learns
// about a board of another is an event in that part's outbox; the parallel version carries
// outboxes between the nodes.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "apps/awari/awari_rules.hpp"

namespace iso::apps::awari {

using value = std::int8_t;

// The values of layers 0, 1, ... (by rank), as far as built.
class database {
 public:
  // Appends the next layer (its number is layers() before the call).
  void add_layer(std::vector<value> values);
  [[nodiscard]] int layers() const { return static_cast<int>(layers_.size()); }
  [[nodiscard]] const std::vector<value>& layer(int stones) const {
    return layers_[static_cast<std::size_t>(stones)];
  }
  // The value of `b`, whose layer must be built.
  [[nodiscard]] value of(const board& b) const;

 private:
  std::vector<std::vector<value>> layers_;
};

// The values of layers 0, 1, ..., read where someone else keeps them: a database, or the
// parallel version's replicated database object, read in place (awari_objects.hpp). Valid
// as long as what it views is left as it is.
class database_view {
 public:
  database_view() = default;
  explicit database_view(std::vector<std::span<const value>> layers) : layers_(std::move(layers)) {}
  // A database's layers (implicit: whatever reads a view reads a database as well).
  database_view(const database& db);  // NOLINT(google-explicit-constructor)

  [[nodiscard]] int layers() const { return static_cast<int>(layers_.size()); }
  [[nodiscard]] std::span<const value> layer(int stones) const {
    return layers_[static_cast<std::size_t>(stones)];
  }
  // The value of `b`, whose layer must be in the view.
  [[nodiscard]] value of(const board& b) const;

 private:
  std::vector<std::span<const value>> layers_;
};

// A fact about a board of the layer, for the part that holds it: its rank, the thresholds it
// concerns (bit T - 1 for T) and whether a child was found lost or won at them.
using event = std::uint64_t;

class layer_analysis {
 public:
  // Part `part` of `parts` of layer `stones`.
  layer_analysis(int stones, std::uint32_t part, std::uint32_t parts);

  // Evaluates the moves of every board of the part and sends out what the capturing moves
  // and the ends of the game decide; `lower` holds every layer below this one (it is read
  // here only, not kept). Calls `every_so_often` after each kBoardsPerStep boards, if it
  // is not empty.
  void start(const database_view& lower, const std::function<void()>& every_so_often = {});
  // The same for the part's boards `first` to `end` (indexes, end excluded) only: start()
  // is these in steps of kBoardsPerStep, from 0 to boards().
  void start_boards(const database_view& lower, std::uint64_t first, std::uint64_t end);
  static constexpr std::uint64_t kBoardsPerStep = 4096;
  // Takes events for boards of this part (from other parts' outboxes).
  void deliver(std::span<const event> events);
  // Works until nothing is left here; events for other parts wait in their outboxes.
  // Calls `every_so_often` after each 4096 events, if it is not empty.
  void run(const std::function<void()>& every_so_often = {});
  // The events waiting for part `to` (taken by moving them out).
  [[nodiscard]] std::vector<event>& outbox(std::uint32_t to) { return outboxes_[to]; }

  // The number of boards of the part; board i of the part has rank i * parts + part.
  [[nodiscard]] std::uint64_t boards() const { return boards_; }
  // The part's values, by index (valid once no part has events left for it).
  [[nodiscard]] std::vector<value> values() const;

 private:
  void route(std::uint64_t rank, std::uint32_t thresholds, bool child_lost);
  // Board `index` of the part has just become won (or lost) at `thresholds`.
  void settled(std::uint64_t index, std::uint32_t thresholds, bool won);
  void apply(event e);

  int stones_;
  std::uint32_t part_;
  std::uint32_t parts_;
  std::uint64_t boards_;
  std::vector<std::uint32_t> won_;   // by index: bit T - 1 set once won at T
  std::vector<std::uint32_t> lost_;  // likewise, lost at T
  std::vector<value> best_exit_;     // the best capturing move's outcome; kNoExit if none
  // By index * stones + T - 1: the moves that capture nothing not yet known to reach a
  // board won at T.
  std::vector<std::uint8_t> open_moves_;
  std::vector<event> queue_;
  std::vector<std::vector<event>> outboxes_;
};

// The sequential analysis: layers 0 to `stones`.
[[nodiscard]] database solve(int stones);

// Whether every value of `db` is its board's best move's outcome (the negamax equation over
// the moves, which the true values satisfy): empty if so, otherwise the first board where not.
[[nodiscard]] std::string first_inconsistency(const database_view& db);

// A digest of every value (layer by layer, by rank) and the counts per value of the top layer:
// "digest 0x..., 18564 boards; 6 stones: -6:120 ... 6:33".
[[nodiscard]] std::string describe(const database_view& db);

// The first board whose values differ in `got` and `want`, or empty if none does.
[[nodiscard]] std::string first_difference(const database_view& got, const database_view& want);

}  // namespace iso::apps::awari
