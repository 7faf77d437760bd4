// The multicast trees (nicfw/multicast_tree.hpp): every shape spans the group, each
// position has the parent its children name, the shapes are the ones documented, and the
// trees of binary and binomial shape meet LFC's deadlock-freedom condition.
#include "nicfw/multicast_tree.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace iso::nicfw {
namespace {

constexpr tree_shape kShapes[] = {tree_shape::binary, tree_shape::chain, tree_shape::binomial};

std::vector<std::uint32_t> children(tree_shape shape, std::uint32_t p, std::uint32_t m) {
  std::vector<std::uint32_t> out;
  tree_children(shape, p, m, out);
  return out;
}

TEST(MulticastTree, EveryShapeSpansEveryGroupSizeOnce) {
  for (tree_shape shape : kShapes) {
    for (std::uint32_t m = 1; m <= 70; ++m) {
      std::vector<int> reached(m, 0);  // times each position is a child: once, but the root
      for (std::uint32_t p = 0; p < m; ++p) {
        for (std::uint32_t c : children(shape, p, m)) {
          ASSERT_LT(c, m);
          ++reached[c];
          ASSERT_EQ(tree_parent(shape, c), p) << tree_shape_name(shape) << " m=" << m;
        }
      }
      for (std::uint32_t p = 0; p < m; ++p) {
        EXPECT_EQ(reached[p], p == 0 ? 0 : 1)
            << tree_shape_name(shape) << " m=" << m << " position " << p;
      }
      EXPECT_FALSE(tree_parent(shape, 0).has_value());
    }
  }
}

TEST(MulticastTree, TheShapesAreTheDocumentedOnes) {
  using v = std::vector<std::uint32_t>;
  EXPECT_EQ(children(tree_shape::binary, 0, 8), (v{1, 2}));
  EXPECT_EQ(children(tree_shape::binary, 3, 8), (v{7}));
  EXPECT_EQ(children(tree_shape::chain, 0, 8), (v{1}));
  EXPECT_EQ(children(tree_shape::chain, 7, 8), (v{}));
  EXPECT_EQ(children(tree_shape::binomial, 0, 8), (v{4, 2, 1}));
  EXPECT_EQ(children(tree_shape::binomial, 1, 8), (v{5, 3}));
  EXPECT_EQ(children(tree_shape::binomial, 2, 8), (v{6}));
  EXPECT_EQ(children(tree_shape::binomial, 3, 8), (v{7}));
  EXPECT_EQ(children(tree_shape::binomial, 0, 5), (v{4, 2, 1}));
  EXPECT_EQ(children(tree_shape::binomial, 1, 5), (v{3}));
}

int depth(tree_shape shape, std::uint32_t p) {
  int d = 0;
  for (auto q = tree_parent(shape, p); q; q = tree_parent(shape, *q)) ++d;
  return d;
}

TEST(MulticastTree, DepthsAreLogarithmicExceptForChains) {
  EXPECT_EQ(depth(tree_shape::chain, 7), 7);
  EXPECT_EQ(depth(tree_shape::binary, 7), 3);
  EXPECT_EQ(depth(tree_shape::binomial, 7), 3);
  EXPECT_EQ(depth(tree_shape::binomial, 63), 6);
}

// LFC appendix A.1: distance(parent -> g) < distance(g -> every child); positions are ring
// distances from the root. (This binomial numbering meets the unmirrored condition.)
TEST(MulticastTree, BinaryAndBinomialMeetTheDeadlockFreedomCondition) {
  for (std::uint32_t m = 2; m <= 64; ++m) {
    for (std::uint32_t g = 1; g < m; ++g) {
      const std::uint32_t up_binary = g - *tree_parent(tree_shape::binary, g);
      for (std::uint32_t c : children(tree_shape::binary, g, m)) EXPECT_LT(up_binary, c - g);
      const std::uint32_t up_binomial = g - *tree_parent(tree_shape::binomial, g);
      for (std::uint32_t c : children(tree_shape::binomial, g, m)) {
        EXPECT_LT(up_binomial, c - g);
      }
    }
  }
}

// A sender's tree is the tree of position 0 rotated to start at it, over the members only.
TEST(MulticastTree, PlacesRotateToTheRootAndSkipNonMembers) {
  const std::vector<comm::node_id> members = {1, 3, 5, 7, 9};
  const auto root = place_in_tree(tree_shape::binary, members, /*root=*/5, /*self=*/5);
  ASSERT_TRUE(root.has_value());
  EXPECT_FALSE(root->parent.has_value());
  EXPECT_EQ(root->children, (std::vector<comm::node_id>{7, 9}));
  const auto leaf = place_in_tree(tree_shape::binary, members, 5, 1);  // position 3
  ASSERT_TRUE(leaf.has_value());
  EXPECT_EQ(leaf->parent, 7u);
  EXPECT_TRUE(leaf->children.empty());
  const auto chain = place_in_tree(tree_shape::chain, members, 7, 1);  // position 2
  ASSERT_TRUE(chain.has_value());
  EXPECT_EQ(chain->parent, 9u);
  EXPECT_EQ(chain->children, (std::vector<comm::node_id>{3}));
  EXPECT_FALSE(place_in_tree(tree_shape::binary, members, 5, 2).has_value());
  EXPECT_FALSE(place_in_tree(tree_shape::binary, members, 4, 5).has_value());
}

TEST(MulticastTree, ShapesParseByNameAndRejectOthersClearly) {
  for (tree_shape shape : kShapes) EXPECT_EQ(*parse_tree_shape(tree_shape_name(shape)), shape);
  const auto bad = parse_tree_shape("ring");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("\"ring\""), std::string_view::npos);
  EXPECT_NE(bad.status().message().find("binomial"), std::string_view::npos);
}

}  // namespace
}  // namespace iso::nicfw
