// The page table: allocation in whole pages with sorted copysets, the nearest copy as read
// target (ties to the lowest node), each node's numbering of the pages it holds, address
// lookup, and an InvalidArgument or OutOfRange naming the value for every bad request.
#include "runtime/smm/page_table.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace iso::runtime {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// s0 {0, 1} - s1 {2} - s2 {3, 4}: one switch apart is 2, two are 4, three are 6.
nicfw::topology chain() {
  absl::StatusOr<nicfw::topology> topo =
      nicfw::parse_topology(R"pb(
                              switch { name: "s0" node: 0 node: 1 link: "s1" }
                              switch { name: "s1" node: 2 link: "s2" }
                              switch { name: "s2" node: 3 node: 4 }
                            )pb",
                            5);
  EXPECT_TRUE(topo.ok()) << topo.status();
  return *std::move(topo);
}

copyset_rule on(const std::vector<node_id>& nodes) {
  return [nodes](std::uint64_t) { return nodes; };
}

TEST(PageTable, AllocationsStartOnANewPage) {
  const nicfw::topology topo = nicfw::topology::single_switch(2);
  page_table table(0, topo, 64);
  EXPECT_EQ(table.allocate(3, 8, on({0})).value(), 0u);
  EXPECT_EQ(table.allocate(1, 8, on({0})).value(), 64u);
  // 129 variables need three pages; the next allocation follows them.
  EXPECT_EQ(table.allocate(129, 4, on({0})).value(), 128u);
  EXPECT_EQ(table.allocate(64, 8, on({0})).value(), 320u);
  EXPECT_EQ(table.pages().size(), 6u);
  EXPECT_EQ(table.pages()[2].width, 4u);
  EXPECT_EQ(table.pages()[4].width, 4u);
  EXPECT_EQ(table.pages()[5].width, 8u);
}

TEST(PageTable, AddressSplitsIntoPageAndOffset) {
  const nicfw::topology topo = nicfw::topology::single_switch(1);
  page_table table(0, topo, 16);
  EXPECT_EQ(table.page_variables(), 16u);
  EXPECT_EQ(table.page_of(0), 0u);
  EXPECT_EQ(table.page_of(15), 0u);
  EXPECT_EQ(table.page_of(16), 1u);
  EXPECT_EQ(table.offset_in_page(16), 0u);
  EXPECT_EQ(table.offset_in_page(47), 15u);
  EXPECT_EQ(table.page_of(std::numeric_limits<std::uint64_t>::max()),
            std::numeric_limits<std::uint64_t>::max() >> 4);
}

TEST(PageTable, RuleIsAskedPerPageAndCopysetsAreSortedWithoutDuplicates) {
  const nicfw::topology topo = nicfw::topology::single_switch(4);
  page_table table(0, topo, 8);
  std::vector<std::uint64_t> asked;
  ASSERT_TRUE(
      table
          .allocate(20, 8,
                    [&](std::uint64_t page) {
                      asked.push_back(page);
                      return page == 1 ? std::vector<node_id>{3, 1, 3, 2} : std::vector<node_id>{2};
                    })
          .ok());
  EXPECT_THAT(asked, ElementsAre(0u, 1u, 2u));
  EXPECT_THAT(table.pages()[1].copyset, ElementsAre(1u, 2u, 3u));
  EXPECT_THAT(table.pages()[0].copyset, ElementsAre(2u));
}

TEST(PageTable, ReadTargetIsThisNodeWhenItHoldsACopy) {
  const nicfw::topology topo = chain();
  page_table table(3, topo, 8);
  ASSERT_TRUE(table.allocate(8, 8, on({0, 3, 4})).ok());
  EXPECT_EQ(table.pages()[0].read_target, 3u);
  EXPECT_TRUE(table.pages()[0].local());
}

TEST(PageTable, ReadTargetIsTheNearestCopyWithTiesToTheLowestNode) {
  const nicfw::topology topo = chain();
  page_table table(3, topo, 8);
  ASSERT_TRUE(table.allocate(8, 8, on({0, 4})).ok());     // 6 away, and 2 away
  ASSERT_TRUE(table.allocate(8, 8, on({1, 2})).ok());     // 6 away, and 4 away
  ASSERT_TRUE(table.allocate(8, 8, on({1, 0})).ok());     // both 6 away
  ASSERT_TRUE(table.allocate(8, 8, on({0, 1, 2})).ok());  // 2 is nearest
  EXPECT_EQ(table.pages()[0].read_target, 4u);
  EXPECT_EQ(table.pages()[1].read_target, 2u);
  EXPECT_EQ(table.pages()[2].read_target, 0u);
  EXPECT_EQ(table.pages()[3].read_target, 2u);
  for (const page_info& page : table.pages()) EXPECT_FALSE(page.local());
  EXPECT_EQ(table.local_pages(), 0u);
  EXPECT_EQ(table.distance_to(4), 2u);
  EXPECT_EQ(table.distance_to(0), 6u);
}

TEST(PageTable, LocalPagesAreNumberedInAllocationOrder) {
  const nicfw::topology topo = nicfw::topology::single_switch(3);
  page_table table(1, topo, 4);
  ASSERT_TRUE(
      table
          .allocate(16, 8,
                    [](std::uint64_t page) {
                      return page % 2 == 0 ? std::vector<node_id>{1} : std::vector<node_id>{0, 2};
                    })
          .ok());
  ASSERT_TRUE(table.allocate(4, 4, on({1, 2})).ok());
  const std::vector<page_info>& pages = table.pages();
  ASSERT_EQ(pages.size(), 5u);
  EXPECT_EQ(pages[0].local_index, 0u);
  EXPECT_EQ(pages[1].local_index, ~0u);
  EXPECT_EQ(pages[2].local_index, 1u);
  EXPECT_EQ(pages[3].local_index, ~0u);
  EXPECT_EQ(pages[4].local_index, 2u);
  EXPECT_EQ(table.local_pages(), 3u);
}

TEST(PageTable, TargetIndexIsWhereTheReadTargetKeepsItsCopy) {
  // Node 0 holds nothing; every other node numbers the pages it holds in allocation order,
  // and node 0 must know those numbers to read their copies directly.
  const nicfw::topology topo = nicfw::topology::single_switch(3);
  page_table table(0, topo, 4);
  ASSERT_TRUE(table.allocate(4, 8, on({1})).ok());     // node 1's page 0
  ASSERT_TRUE(table.allocate(4, 8, on({1, 2})).ok());  // node 1's page 1, node 2's page 0
  ASSERT_TRUE(table.allocate(8, 8, on({2})).ok());     // node 2's pages 1 and 2
  const std::vector<page_info>& pages = table.pages();
  ASSERT_EQ(pages.size(), 4u);
  EXPECT_EQ(pages[0].read_target, 1u);
  EXPECT_EQ(pages[0].target_index, 0u);
  EXPECT_EQ(pages[1].read_target, 1u);  // a tie between 1 and 2
  EXPECT_EQ(pages[1].target_index, 1u);
  EXPECT_EQ(pages[2].read_target, 2u);
  EXPECT_EQ(pages[2].target_index, 1u);
  EXPECT_EQ(pages[3].target_index, 2u);
}

TEST(PageTable, FindsThePageOfEveryAllocatedAddress) {
  const nicfw::topology topo = nicfw::topology::single_switch(2);
  page_table table(0, topo, 8);
  ASSERT_TRUE(table.allocate(10, 8, on({0})).ok());
  ASSERT_TRUE(table.allocate(1, 4, on({1})).ok());
  EXPECT_EQ(table.find(0).value(), &table.pages()[0]);
  EXPECT_EQ(table.find(9).value(), &table.pages()[1]);
  // The rest of an allocation's last page is inside memory too.
  EXPECT_EQ(table.find(15).value(), &table.pages()[1]);
  EXPECT_EQ(table.find(23).value(), &table.pages()[2]);
  EXPECT_EQ(table.lookup(16), &table.pages()[2]);
  EXPECT_EQ(table.lookup(24), nullptr);
}

TEST(PageTable, AddressOutsideMemoryIsOutOfRangeNamingIt) {
  const nicfw::topology topo = nicfw::topology::single_switch(1);
  page_table table(0, topo, 8);
  const absl::StatusOr<const page_info*> before = table.find(0);
  EXPECT_EQ(before.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(before.status().message(),
            "address 0 is outside isotach memory (0 variables allocated)");
  ASSERT_TRUE(table.allocate(9, 8, on({0})).ok());
  const absl::StatusOr<const page_info*> after = table.find(16);
  EXPECT_EQ(after.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(after.status().message(),
            "address 16 is outside isotach memory (16 variables allocated)");
  const std::uint64_t last = std::numeric_limits<std::uint64_t>::max();
  EXPECT_EQ(table.lookup(last), nullptr);
  EXPECT_THAT(std::string(table.find(last).status().message()),
              HasSubstr("address 18446744073709551615 is outside"));
}

TEST(PageTable, WidthOtherThanFourOrEightIsInvalid) {
  const nicfw::topology topo = nicfw::topology::single_switch(1);
  page_table table(0, topo, 8);
  for (std::uint8_t width : {0, 1, 2, 16}) {
    const absl::StatusOr<std::uint64_t> got = table.allocate(1, width, on({0}));
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(got.status().message(), "variable width " + std::to_string(width) + " is not 4 or 8");
  }
  EXPECT_TRUE(table.pages().empty());
}

TEST(PageTable, ZeroVariablesIsInvalid) {
  const nicfw::topology topo = nicfw::topology::single_switch(1);
  page_table table(0, topo, 8);
  EXPECT_EQ(table.allocate(0, 8, on({0})).status(),
            absl::InvalidArgumentError("cannot allocate 0 variables"));
  EXPECT_TRUE(table.pages().empty());
}

TEST(PageTable, EmptyCopysetIsInvalidAndAddsNoPage) {
  const nicfw::topology topo = nicfw::topology::single_switch(2);
  page_table table(0, topo, 8);
  ASSERT_TRUE(table.allocate(8, 8, on({0})).ok());
  const absl::StatusOr<std::uint64_t> got = table.allocate(24, 8, [](std::uint64_t page) {
    return page == 2 ? std::vector<node_id>{} : std::vector<node_id>{0, 1};
  });
  EXPECT_EQ(got.status(),
            absl::InvalidArgumentError("page 2 of the allocation has an empty copyset"));
  // Nothing of the failed allocation remains: the next one starts where it would have.
  EXPECT_EQ(table.pages().size(), 1u);
  EXPECT_EQ(table.local_pages(), 1u);
  EXPECT_EQ(table.allocate(1, 8, on({1})).value(), 8u);
}

TEST(PageTable, CopyOnANodeOutsideTheJobIsInvalid) {
  const nicfw::topology topo = nicfw::topology::single_switch(4);
  page_table table(0, topo, 8);
  const absl::StatusOr<std::uint64_t> got = table.allocate(16, 8, [](std::uint64_t page) {
    return page == 1 ? std::vector<node_id>{0, 4} : std::vector<node_id>{0};
  });
  EXPECT_EQ(got.status(),
            absl::InvalidArgumentError("page 1 is placed on node 4 but the job has 4 nodes"));
  EXPECT_TRUE(table.pages().empty());
  EXPECT_EQ(table.local_pages(), 0u);
}

TEST(PageTableDeathTest, PageSizeMustBeAPowerOfTwo) {
  const nicfw::topology topo = nicfw::topology::single_switch(1);
  EXPECT_DEATH(page_table(0, topo, 48), "page size 48 is not a power of two");
}

}  // namespace
}  // namespace iso::runtime
