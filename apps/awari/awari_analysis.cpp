#include "apps/awari/awari_analysis.hpp"

#include <algorithm>
#include <bit>
#include <map>
#include <utility>

#include "apps/common/report.hpp"

namespace iso::apps::awari {

namespace {

constexpr int kNoExit = -128;       // fits a value
constexpr int kThresholdBits = 16;  // bits of an event's thresholds (kMaxStones of them)
static_assert(kMaxStones <= kThresholdBits);

constexpr event make_event(std::uint64_t rank, std::uint32_t thresholds, bool child_lost) {
  return (rank << (kThresholdBits + 1)) | (std::uint64_t{thresholds} << 1) | (child_lost ? 1U : 0U);
}
constexpr std::uint64_t rank_of_event(event e) { return e >> (kThresholdBits + 1); }
constexpr std::uint32_t thresholds_of(event e) {
  return static_cast<std::uint32_t>(e >> 1) & ((1U << kThresholdBits) - 1);
}
constexpr bool child_lost_in(event e) { return (e & 1U) != 0; }

// Bits 1..n: thresholds T = 1..n.
constexpr std::uint32_t up_to(int n) { return n <= 0 ? 0 : (1U << n) - 1; }

// The highest threshold in `bits`.
int highest(std::uint32_t bits) { return static_cast<int>(std::bit_width(bits)); }

bool mover_has_stones(const board& b) {
  return std::any_of(b.begin(), b.begin() + kSide, [](std::uint8_t c) { return c != 0; });
}

}  // namespace

void database::add_layer(std::vector<value> values) { layers_.push_back(std::move(values)); }

value database::of(const board& b) const {
  return layers_[static_cast<std::size_t>(stones_of(b))][rank_of(b)];
}

database_view::database_view(const database& db) {
  layers_.reserve(static_cast<std::size_t>(db.layers()));
  for (int s = 0; s < db.layers(); ++s) layers_.emplace_back(db.layer(s));
}

value database_view::of(const board& b) const {
  return layers_[static_cast<std::size_t>(stones_of(b))][rank_of(b)];
}

layer_analysis::layer_analysis(int stones, std::uint32_t part, std::uint32_t parts)
    : stones_(stones),
      part_(part),
      parts_(parts),
      boards_(layer_size(stones) > part ? (layer_size(stones) - 1 - part) / parts + 1 : 0),
      won_(boards_, 0),
      lost_(boards_, 0),
      best_exit_(boards_, static_cast<value>(kNoExit)),
      open_moves_(boards_ * static_cast<std::uint64_t>(stones), 0),
      outboxes_(parts) {}

void layer_analysis::start(const database_view& lower,
                           const std::function<void()>& every_so_often) {
  for (std::uint64_t first = 0; first < boards_; first += kBoardsPerStep) {
    start_boards(lower, first, std::min(boards_, first + kBoardsPerStep));
    if (every_so_often) every_so_often();
  }
}

void layer_analysis::start_boards(const database_view& lower, std::uint64_t first,
                                  std::uint64_t end) {
  for (std::uint64_t index = first; index < end; ++index) {
    const board b = board_of(stones_, index * parts_ + part_);
    int quiet_moves = 0;
    int best = kNoExit;
    if (!mover_has_stones(b)) {
      best = -stones_;  // the game is over: the opponent takes the rest
    } else {
      for (int pit = 0; pit < kSide; ++pit) {
        if (b[static_cast<std::size_t>(pit)] == 0) continue;
        const move_result m = play(b, pit);
        if (m.captured == 0) {
          ++quiet_moves;
        } else {
          best = std::max(best, m.captured - lower.of(m.next));
        }
      }
    }
    best_exit_[index] = static_cast<value>(best);
    std::fill_n(open_moves_.begin() + static_cast<std::ptrdiff_t>(index * stones_), stones_,
                static_cast<std::uint8_t>(quiet_moves));
    if (best >= 1) settled(index, up_to(std::min(best, stones_)), true);
    if (quiet_moves == 0 && best <= -1) settled(index, up_to(-best), false);
  }
}

void layer_analysis::deliver(std::span<const event> events) {
  queue_.insert(queue_.end(), events.begin(), events.end());
}

void layer_analysis::run(const std::function<void()>& every_so_often) {
  std::uint64_t done = 0;
  while (!queue_.empty()) {
    const event e = queue_.back();
    queue_.pop_back();
    apply(e);
    if (++done % 4096 == 0 && every_so_often) every_so_often();
  }
}

void layer_analysis::route(std::uint64_t rank, std::uint32_t thresholds, bool child_lost) {
  const auto to = static_cast<std::uint32_t>(rank % parts_);
  const event e = make_event(rank, thresholds, child_lost);
  if (to == part_) {
    queue_.push_back(e);
  } else {
    outboxes_[to].push_back(e);
  }
}

void layer_analysis::settled(std::uint64_t index, std::uint32_t thresholds, bool won) {
  if (thresholds == 0) return;
  (won ? won_ : lost_)[index] |= thresholds;
  // A board won at T is a move not lost for the parent; a board lost at T wins the parent.
  const board b = board_of(stones_, index * parts_ + part_);
  for_each_parent(b, [&](const board& parent) { route(rank_of(parent), thresholds, !won); });
}

void layer_analysis::apply(event e) {
  const std::uint64_t index = rank_of_event(e) / parts_;
  const std::uint32_t thresholds = thresholds_of(e);
  if (child_lost_in(e)) {
    settled(index, thresholds & ~won_[index], true);
    return;
  }
  const std::uint32_t open = thresholds & ~won_[index] & ~lost_[index];
  std::uint32_t now_lost = 0;
  for (int t = 1; t <= stones_; ++t) {
    if ((open & (1U << (t - 1))) == 0) continue;
    std::uint8_t& left = open_moves_[index * stones_ + static_cast<std::uint64_t>(t - 1)];
    if (--left == 0 && best_exit_[index] <= -t) now_lost |= 1U << (t - 1);
  }
  settled(index, now_lost, false);
}

std::vector<value> layer_analysis::values() const {
  std::vector<value> out(boards_, 0);
  for (std::uint64_t index = 0; index < boards_; ++index) {
    if (won_[index] != 0) {
      out[index] = static_cast<value>(highest(won_[index]));
    } else if (lost_[index] != 0) {
      out[index] = static_cast<value>(-highest(lost_[index]));
    }
  }
  return out;
}

database solve(int stones) {
  database db;
  for (int s = 0; s <= stones; ++s) {
    layer_analysis layer(s, 0, 1);
    layer.start(db);
    layer.run();
    db.add_layer(layer.values());
  }
  return db;
}

std::string first_inconsistency(const database_view& db) {
  for (int s = 0; s < db.layers(); ++s) {
    const std::span<const value> values = db.layer(s);
    for (std::uint64_t rank = 0; rank < values.size(); ++rank) {
      const board b = board_of(s, rank);
      int best = mover_has_stones(b) ? kNoExit : -s;
      for (int pit = 0; pit < kSide; ++pit) {
        if (b[static_cast<std::size_t>(pit)] == 0) continue;
        const move_result m = play(b, pit);
        best = std::max(best, m.captured - db.of(m.next));
      }
      if (best != values[rank]) {
        return format("board %s (%d stones, rank %llu) has value %d, its best move %d",
                      show(b).c_str(), s, static_cast<unsigned long long>(rank), values[rank],
                      best);
      }
    }
  }
  return {};
}

std::string describe(const database_view& db) {
  std::uint64_t digest = 0xcbf29ce484222325ULL;  // FNV-1a, 64 bits
  std::uint64_t boards = 0;
  for (int s = 0; s < db.layers(); ++s) {
    for (value v : db.layer(s)) {
      digest = (digest ^ static_cast<std::uint8_t>(v)) * 0x100000001b3ULL;
      ++boards;
    }
  }
  std::string out =
      format("digest 0x%016llx over %llu boards", static_cast<unsigned long long>(digest),
             static_cast<unsigned long long>(boards));
  if (db.layers() == 0) return out;
  const int top = db.layers() - 1;
  std::map<int, std::uint64_t> counts;
  for (value v : db.layer(top)) ++counts[v];
  out += format("; values of the %d-stone boards:", top);
  for (const auto& [v, count] : counts) {
    out += format(" %d:%llu", v, static_cast<unsigned long long>(count));
  }
  return out;
}

std::string first_difference(const database_view& got, const database_view& want) {
  if (got.layers() != want.layers()) {
    return format("%d layers, the sequential analysis %d", got.layers(), want.layers());
  }
  for (int s = 0; s < got.layers(); ++s) {
    const std::span<const value> a = got.layer(s);
    const std::span<const value> b = want.layer(s);
    if (a.size() != b.size()) {
      return format("layer %d has %zu boards, the sequential one %zu", s, a.size(), b.size());
    }
    for (std::uint64_t rank = 0; rank < a.size(); ++rank) {
      if (a[rank] != b[rank]) {
        return format("board %s (%d stones, rank %llu): value %d, the sequential analysis %d",
                      show(board_of(s, rank)).c_str(), s, static_cast<unsigned long long>(rank),
                      a[rank], b[rank]);
      }
    }
  }
  return {};
}

}  // namespace iso::apps::awari
