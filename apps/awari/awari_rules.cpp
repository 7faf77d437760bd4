#include "apps/awari/awari_rules.hpp"

#include <cstdio>

namespace iso::apps::awari {

namespace {

// ways[s][k]: the number of ways to put s stones into k pits, C(s + k - 1, k - 1).
struct ways_table {
  std::array<std::array<std::uint64_t, kPits + 2>, kMaxStones + 1> ways{};
  constexpr ways_table() {
    for (int s = 0; s <= kMaxStones; ++s) {
      ways[s][0] = s == 0 ? 1 : 0;
      for (int k = 1; k <= kPits + 1; ++k)
        ways[s][k] = ways[s][k - 1] + (s > 0 ? ways[s - 1][k] : 0);
    }
  }
};
constexpr ways_table kWays;

std::uint64_t ways(int stones, int pits) {
  return kWays.ways[static_cast<std::size_t>(stones)][static_cast<std::size_t>(pits)];
}

}  // namespace

std::uint64_t layer_size(int stones) { return ways(stones, kPits); }

int stones_of(const board& b) {
  int total = 0;
  for (std::uint8_t c : b) total += c;
  return total;
}

// The boards before b are those with fewer stones in the first pit where they differ: for
// pit i with `left` stones still to place in pits i..11, those with v < b[i] stones there,
// sum over v of ways(left - v, 11 - i) = ways(left, 12 - i) - ways(left - b[i], 12 - i).
std::uint64_t rank_of(const board& b) {
  std::uint64_t rank = 0;
  int left = stones_of(b);
  for (int i = 0; i + 1 < kPits; ++i) {
    rank += ways(left, kPits - i) - ways(left - b[static_cast<std::size_t>(i)], kPits - i);
    left -= b[static_cast<std::size_t>(i)];
  }
  return rank;
}

board board_of(int stones, std::uint64_t rank) {
  board b{};
  int left = stones;
  for (int i = 0; i + 1 < kPits; ++i) {
    int v = 0;
    for (;;) {
      const std::uint64_t block = ways(left - v, kPits - 1 - i);
      if (rank < block) break;
      rank -= block;
      ++v;
    }
    b[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v);
    left -= v;
  }
  b[kPits - 1] = static_cast<std::uint8_t>(left);
  return b;
}

board turned(const board& b) {
  board t{};
  for (int i = 0; i < kPits; ++i)
    t[static_cast<std::size_t>(i)] = b[static_cast<std::size_t>((i + kSide) % kPits)];
  return t;
}

move_result play(const board& b, int pit) {
  board after = b;
  int in_hand = after[static_cast<std::size_t>(pit)];
  after[static_cast<std::size_t>(pit)] = 0;
  int last = pit;
  while (in_hand > 0) {
    last = next_pit(last, pit);
    ++after[static_cast<std::size_t>(last)];
    --in_hand;
  }
  int captured = 0;
  while (last >= kSide && captures(last, after[static_cast<std::size_t>(last)])) {
    captured += after[static_cast<std::size_t>(last)];
    after[static_cast<std::size_t>(last)] = 0;
    --last;
  }
  return {turned(after), captured};
}

std::string show(const board& b) {
  std::string out;
  for (int i = 0; i < kPits; ++i) {
    if (i == kSide) out += "| ";
    out += std::to_string(b[static_cast<std::size_t>(i)]);
    if (i + 1 < kPits) out += ' ';
  }
  return out;
}

}  // namespace iso::apps::awari
