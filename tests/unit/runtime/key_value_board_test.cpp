#include "runtime/bootstrap/key_value_board.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace iso::runtime {
namespace {

TEST(KeyValueBoard, FindsWhatWasPutAndTheLatestValueWins) {
  std::vector<std::byte> area(256);
  key_value_board board(area);
  ASSERT_TRUE(board.put("address", "10.0.0.1:7").ok());
  ASSERT_TRUE(board.put("rails", "2").ok());
  ASSERT_TRUE(board.put("address", "10.0.0.2:9").ok());
  EXPECT_EQ(*key_value_board::find(area, "rails"), "2");
  EXPECT_EQ(*key_value_board::find(area, "address"), "10.0.0.2:9");
  EXPECT_TRUE(absl::IsNotFound(key_value_board::find(area, "missing").status()));
}

TEST(KeyValueBoard, RefusesEmptyKeysAndOverflowWithoutDamage) {
  std::vector<std::byte> area(64);
  key_value_board board(area);
  EXPECT_TRUE(absl::IsInvalidArgument(board.put("", "x")));
  ASSERT_TRUE(board.put("k", "v").ok());
  absl::Status full = board.put("big", std::string(100, 'x'));
  EXPECT_TRUE(absl::IsResourceExhausted(full)) << full;
  EXPECT_NE(full.message().find("'big'"), std::string::npos) << full;
  EXPECT_EQ(*key_value_board::find(area, "k"), "v") << "a refused put must not damage the board";
}

}  // namespace
}  // namespace iso::runtime
