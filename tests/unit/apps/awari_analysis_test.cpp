// The Awari rules and layer analysis (apps/awari): ranks number the boards, unmoves undo
// exactly the moves that capture nothing, and an analysis split into parts, with the events
// carried between them by hand, builds the same databases as one part.
#include "apps/awari/awari_analysis.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "apps/awari/awari_objects.hpp"
#include "apps/awari/awari_rules.hpp"

namespace iso::apps::awari {
namespace {

board make(std::initializer_list<int> pits) {
  board b{};
  std::size_t i = 0;
  for (int p : pits) b[i++] = static_cast<std::uint8_t>(p);
  return b;
}

TEST(AwariRules, RanksNumberTheBoardsOfALayerInOrder) {
  for (int stones = 0; stones <= 5; ++stones) {
    board previous{};
    for (std::uint64_t rank = 0; rank < layer_size(stones); ++rank) {
      const board b = board_of(stones, rank);
      ASSERT_EQ(stones_of(b), stones);
      ASSERT_EQ(rank_of(b), rank) << show(b);
      if (rank > 0) {
        ASSERT_LT(previous, b) << show(b);
      }
      previous = b;
    }
  }
  EXPECT_EQ(layer_size(0), 1U);
  EXPECT_EQ(layer_size(3), 364U);  // C(14, 11)
}

TEST(AwariRules, CapturesTwosAndThreesBackwardsOnTheOpponentsSide) {
  // Pit 5's two stones land in the opponent's pits 6 and 7, making 2 and 3 there.
  const move_result m = play(make({0, 0, 0, 0, 0, 2, 1, 2, 0, 0, 0, 1}), 5);
  EXPECT_EQ(m.captured, 5);
  EXPECT_EQ(m.next, turned(make({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1})));
  // A last stone on the mover's own side captures nothing.
  EXPECT_EQ(play(make({2, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0}), 0).captured, 0);
}

TEST(AwariRules, SowingTwelveOrMoreSkipsTheEmptiedPit) {
  const move_result m = play(make({12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}), 0);
  EXPECT_EQ(m.captured, 0);
  EXPECT_EQ(m.next, turned(make({0, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1})));
}

// Every board's parents, found by playing every move of every board of the layer.
TEST(AwariRules, UnmovesUndoExactlyTheMovesThatCaptureNothing) {
  for (int stones = 1; stones <= 5; ++stones) {
    std::map<board, std::vector<board>> parents_by_play;
    for (std::uint64_t rank = 0; rank < layer_size(stones); ++rank) {
      const board parent = board_of(stones, rank);
      for (int pit = 0; pit < kSide; ++pit) {
        if (parent[static_cast<std::size_t>(pit)] == 0) continue;
        const move_result m = play(parent, pit);
        if (m.captured == 0) parents_by_play[m.next].push_back(parent);
      }
    }
    for (std::uint64_t rank = 0; rank < layer_size(stones); ++rank) {
      const board b = board_of(stones, rank);
      std::vector<board> unmoved;
      for_each_parent(b, [&](const board& parent) { unmoved.push_back(parent); });
      std::vector<board> played = parents_by_play[b];
      std::sort(unmoved.begin(), unmoved.end());
      std::sort(played.begin(), played.end());
      ASSERT_EQ(unmoved, played) << show(b);
    }
  }
}

TEST(AwariAnalysis, ValuesSatisfyTheNegamaxEquation) {
  const database db = solve(7);
  EXPECT_EQ(first_inconsistency(db), "");
  // A lone stone: the mover with it on pits 0-4 keeps it on his side, and the opponent,
  // with none, loses it; from pit 5 it goes over, and the mover loses it.
  EXPECT_EQ(db.of(make({1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})), 1);
  EXPECT_EQ(db.of(make({0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0})), -1);
  EXPECT_EQ(db.of(make({0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0})), -1);
}

// The parallel version's split, without the runtime: every part works until it is idle,
// then the outboxes are carried to their parts, round after round, until none has any.
database solve_in_parts(int stones, std::uint32_t parts) {
  database db;
  for (int s = 0; s <= stones; ++s) {
    std::vector<layer_analysis> layer;
    for (std::uint32_t part = 0; part < parts; ++part) layer.emplace_back(s, part, parts);
    for (layer_analysis& part : layer) part.start(db);
    for (bool carried = true; carried;) {
      carried = false;
      for (layer_analysis& part : layer) part.run();
      for (layer_analysis& from : layer) {
        for (std::uint32_t to = 0; to < parts; ++to) {
          std::vector<event>& out = from.outbox(to);
          if (out.empty()) continue;
          layer[to].deliver(out);
          out.clear();
          carried = true;
        }
      }
    }
    std::vector<value> values(layer_size(s));
    for (std::uint32_t part = 0; part < parts; ++part) {
      const std::vector<value> mine = layer[part].values();
      for (std::uint64_t i = 0; i < mine.size(); ++i) values[i * parts + part] = mine[i];
    }
    db.add_layer(std::move(values));
  }
  return db;
}

TEST(AwariAnalysis, AnySplitIntoPartsGivesTheSameDatabase) {
  const database whole = solve(6);
  for (std::uint32_t parts : {2U, 3U, 5U}) {
    EXPECT_EQ(first_difference(solve_in_parts(6, parts), whole), "") << parts << " parts";
  }
}

TEST(AwariAnalysis, DifferencesNameTheBoard) {
  const database a = solve(3);
  database b;
  for (int s = 0; s <= 3; ++s) {
    std::vector<value> layer = a.layer(s);
    if (s == 2) layer[5] = static_cast<value>(layer[5] + 1);
    b.add_layer(std::move(layer));
  }
  const std::string difference = first_difference(b, a);
  EXPECT_NE(difference.find("2 stones, rank 5"), std::string::npos) << difference;
}

}  // namespace
}  // namespace iso::apps::awari

namespace iso::apps::awari {
namespace {

// A put whose index of the first value is so large that the rank of its last value wraps
// around 2^64 is refused before it goes out (it passed the check, and the body wrote out of
// bounds); so is one that runs past the layer.
TEST(AwariDatabase, PutsBeyondTheLayerAreRefusedEvenWhereTheRankWouldWrap) {
  const iso::object_type type = make_database_type();
  const iso::operation* put = type.find(0);
  ASSERT_NE(put, nullptr);
  const std::vector<value> two(2, 1);
  const auto bytes = [&](std::uint64_t first, std::uint32_t parts) {
    return iso::detail::encode_arguments(
        values_header{.stones = 3, .part = 1, .parts = parts, .unused = 0, .first = first}, two);
  };
  EXPECT_NO_THROW((void)put->unmarshal(bytes(0, 2)));
  const std::uint64_t wraps = (~std::uint64_t{0} / 2) + 1;  // (wraps + 1) * 2 + 1 wraps to 3
  EXPECT_THROW((void)put->unmarshal(bytes(wraps, 2)), iso::error);
  EXPECT_THROW((void)put->unmarshal(bytes(layer_size(3) - 1, 1)), iso::error);
}

}  // namespace
}  // namespace iso::apps::awari
