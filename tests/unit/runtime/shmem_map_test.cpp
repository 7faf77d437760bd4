// The shmem map parser: good files place what they name and leave the rest on every node;
// bad ones are refused with the file, the line and the offending token.
#include "runtime/shmem_map.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace iso::runtime {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr std::uint64_t kPages = 256;  // the C API's flat memory: 32-bit pages, then 64-bit
constexpr std::uint32_t kNodes = 4;

absl::StatusOr<shmem_map> parse(std::string_view text) {
  return shmem_map::parse(text, "map.txt", kPages, kNodes);
}

// The message of a refused map; fails the test if it was accepted.
std::string refusal(std::string_view text) {
  absl::StatusOr<shmem_map> map = parse(text);
  EXPECT_FALSE(map.ok()) << "accepted:\n" << text;
  if (map.ok()) return "";
  EXPECT_EQ(map.status().code(), absl::StatusCode::kInvalidArgument) << map.status();
  return std::string(map.status().message());
}

TEST(ShmemMap, EmptyFileLeavesEveryPageOnEveryNode) {
  absl::StatusOr<shmem_map> map = parse("");
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_EQ(map->pages(), kPages);
  for (std::uint64_t page : {0u, 127u, 128u, 255u}) {
    EXPECT_FALSE(map->named(page));
    EXPECT_THAT(map->copyset(page), ElementsAre(0, 1, 2, 3));
  }
}

TEST(ShmemMap, DefaultMapIsEveryNode) {
  const shmem_map map(kPages, 2);
  EXPECT_THAT(map.copyset(17), ElementsAre(0, 1));
  EXPECT_FALSE(map.named(17));
}

TEST(ShmemMap, PlacesNamedRegionsAndKeepsTheRestEverywhere) {
  absl::StatusOr<shmem_map> map = parse(
      "# the classic layout\n"
      "\n"
      "0 2 1            # pages 0 and 1 on node 1\n"
      "  10\t3   3,0,3  \n"  // tabs, blanks, an unsorted list with a repeat
      "128 1 all\r\n"        // a CRLF file
      "255 1 2");            // no newline at the end
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_THAT(map->copyset(0), ElementsAre(1));
  EXPECT_THAT(map->copyset(1), ElementsAre(1));
  EXPECT_FALSE(map->named(2));
  EXPECT_THAT(map->copyset(2), ElementsAre(0, 1, 2, 3));
  EXPECT_FALSE(map->named(9));
  for (std::uint64_t page : {10u, 11u, 12u}) EXPECT_THAT(map->copyset(page), ElementsAre(0, 3));
  EXPECT_FALSE(map->named(13));
  EXPECT_TRUE(map->named(128));
  EXPECT_THAT(map->copyset(128), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(map->copyset(255), ElementsAre(2));
}

TEST(ShmemMap, WholeSpaceInOneLine) {
  absl::StatusOr<shmem_map> map = parse("0 256 0,1,2,3");
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_TRUE(map->named(0));
  EXPECT_TRUE(map->named(255));
}

TEST(ShmemMap, ErrorsNameTheFileTheLineAndTheToken) {
  EXPECT_THAT(refusal("0 1 all\n# fine\nx 1 all\n"),
              HasSubstr("map.txt:3: first page 'x' is not a decimal number"));
  EXPECT_THAT(refusal("-1 1 all"), HasSubstr("map.txt:1: first page '-1'"));
  EXPECT_THAT(refusal("0x10 1 all"), HasSubstr("first page '0x10'"));
  EXPECT_THAT(refusal("256 1 all"),
              HasSubstr("map.txt:1: first page '256' is outside the map, which has pages 0..255"));
  EXPECT_THAT(refusal("99999999999999999999999 1 all"),
              HasSubstr("first page '99999999999999999999999' is not a decimal number"));
  EXPECT_THAT(refusal("\n\n0 0 all"),
              HasSubstr("map.txt:3: page count '0' is not a positive number"));
  EXPECT_THAT(refusal("0 two all"), HasSubstr("page count 'two'"));
  EXPECT_THAT(refusal("250 7 all"),
              HasSubstr("map.txt:1: page count '7' runs past the last page (255) from page 250"));
  EXPECT_THAT(refusal("0 1 4"),
              HasSubstr("map.txt:1: node '4' in copyset '4' is not in this job of 4 nodes (0..3)"));
  EXPECT_THAT(refusal("0 1 0,9"), HasSubstr("node '9' in copyset '0,9'"));
  EXPECT_THAT(refusal("0 1 0,,1"), HasSubstr("map.txt:1: empty node id in copyset '0,,1'"));
  EXPECT_THAT(refusal("0 1 1,"), HasSubstr("empty node id in copyset '1,'"));
  EXPECT_THAT(refusal("0 1 none"),
              HasSubstr("copyset 'none' is neither 'all' nor a comma list of node ids ('none')"));
  EXPECT_THAT(refusal("0 1 0;1"), HasSubstr("('0;1')"));
  EXPECT_THAT(refusal("0 1 ALL"), HasSubstr("copyset 'ALL'"));
  EXPECT_THAT(refusal("7"), HasSubstr("map.txt:1: the line ends after '7'; expected "
                                      "'<first_page> <page_count> <copyset>'"));
  EXPECT_THAT(refusal("7 1 # comment eats the copyset"),
              HasSubstr("map.txt:1: missing the copyset after '1'"));
  EXPECT_THAT(refusal("7 1 all extra"), HasSubstr("map.txt:1: unexpected 'extra' after"));
  EXPECT_THAT(refusal("0 4 all\n\n2 1 1\n"),
              HasSubstr("map.txt:3: page 2 of '2 1' is already placed by line 1"));
}

// The Regehr report's syntax (B.2.2), `page [-page] :node [,node]*;`, beside ours.
TEST(ShmemMap, AcceptsTheRegehrSyntax) {
  absl::StatusOr<shmem_map> map = parse(
      "# the report's syntax\n"
      "0-127 :0,1,2;\n"
      "128 :3;        # one page\n"
      "129 - 130 : 2 , 1 ;\n"
      "131 1 0       # ours, on the same file\n");
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_THAT(map->copyset(0), ElementsAre(0, 1, 2));
  EXPECT_THAT(map->copyset(127), ElementsAre(0, 1, 2));
  EXPECT_THAT(map->copyset(128), ElementsAre(3));
  EXPECT_THAT(map->copyset(129), ElementsAre(1, 2));
  EXPECT_THAT(map->copyset(130), ElementsAre(1, 2));
  EXPECT_THAT(map->copyset(131), ElementsAre(0));
  EXPECT_FALSE(map->named(132));
}

TEST(ShmemMap, AFileInNeitherSyntaxIsToldBoth) {
  const std::string both =
      "expected '<first_page> <page_count> <copyset>' (e.g. '128 4 0,2' or '0 128 all') or the "
      "Regehr report's '<page>[-<page>] : <node>[,<node>]* ;'";
  EXPECT_THAT(refusal("page 3 on node 1"), HasSubstr("map.txt:1: unexpected 'node' after the "
                                                     "copyset; " +
                                                     both));
  EXPECT_THAT(refusal("pages 0 1"),
              HasSubstr("first page 'pages' is not a decimal number; " + both));
  EXPECT_THAT(refusal("5"), HasSubstr(both));
  EXPECT_THAT(refusal("3 :1"),
              HasSubstr("map.txt:1: the node list '1' does not end with ';'; " + both));
  EXPECT_THAT(refusal("x-4 :1;"), HasSubstr("page 'x' is not a decimal number; " + both));
  EXPECT_THAT(refusal("4-x :1;"), HasSubstr("last page 'x' is not a decimal number"));
  EXPECT_THAT(refusal("4-2 :1;"), HasSubstr("page range '4-2' runs backwards"));
  EXPECT_THAT(refusal("256 :1;"), HasSubstr("page 256 is outside the map, which has pages 0..255"));
  EXPECT_THAT(refusal("3 : ;"), HasSubstr("no node after ':'"));
  EXPECT_THAT(refusal("3 : 1; 4 : 2;"), HasSubstr("more than one ';'"));
  EXPECT_THAT(refusal("3 : all;"), HasSubstr("'all' is not a node id here"));
  EXPECT_THAT(refusal("3 : 9;"),
              HasSubstr("node '9' in copyset '9' is not in this job of 4 nodes"));
  EXPECT_THAT(refusal("0-3 :1;\n2 1 0\n"),
              HasSubstr("map.txt:2: page 2 of '2 1' is already placed by line 1"));
  EXPECT_THAT(refusal("0 4 0\n3 :1;\n"),
              HasSubstr("map.txt:2: page 3 of '3' is already placed by line 1"));
}

TEST(ShmemMap, LoadReadsAFileAndNamesItInErrors) {
  const std::string path = ::testing::TempDir() + "shmem_map_test.map";
  std::FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("4 2 2\n5 1 all\n", f);
  std::fclose(f);
  absl::StatusOr<shmem_map> map = shmem_map::load(path, kPages, kNodes);
  ASSERT_FALSE(map.ok());
  EXPECT_EQ(map.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(map.status().message(), HasSubstr(path + ":2: page 5 of '5 1'"));

  f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("4 2 2\n", f);
  std::fclose(f);
  map = shmem_map::load(path, kPages, kNodes);
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_THAT(map->copyset(5), ElementsAre(2));
  std::remove(path.c_str());
}

TEST(ShmemMap, LoadReportsAMissingFileAndADirectory) {
  absl::StatusOr<shmem_map> missing = shmem_map::load("/nonexistent/shmem.map", kPages, kNodes);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("/nonexistent/shmem.map"));

  absl::StatusOr<shmem_map> directory = shmem_map::load("/", kPages, kNodes);
  ASSERT_FALSE(directory.ok());
  EXPECT_THAT(directory.status().message(), HasSubstr("shmem map '/'"));
}

}  // namespace
}  // namespace iso::runtime
