// The switch tree: distances, next hops and TM placement for valid topologies, and a precise
// InvalidArgument for every rule a topology file can break.
#include "nicfw/topology.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

namespace iso::nicfw {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// Parses `text` for `nodes` nodes and expects InvalidArgument whose message holds every
// string of `needles`.
void expect_invalid(const std::string& text, std::uint32_t nodes,
                    const std::vector<std::string>& needles) {
  const absl::StatusOr<topology> topo = parse_topology(text, nodes);
  ASSERT_FALSE(topo.ok()) << "accepted:\n" << text;
  EXPECT_EQ(topo.status().code(), absl::StatusCode::kInvalidArgument) << topo.status();
  const std::string message(topo.status().message());
  for (const std::string& needle : needles) EXPECT_THAT(message, HasSubstr(needle)) << text;
}

topology parse_ok(const std::string& text, std::uint32_t nodes) {
  absl::StatusOr<topology> topo = parse_topology(text, nodes);
  EXPECT_TRUE(topo.ok()) << topo.status() << "\n" << text;
  if (!topo.ok()) return topology::single_switch(nodes);
  return *std::move(topo);
}

// s0 {0, 1} - s1 {2} - s2 {3, 4}; s1's TM placed on node 0 explicitly.
constexpr const char* chain_text = R"pb(
  switch { name: "s0" node: 1 node: 0 link: "s1" }
  switch { name: "s1" node: 2 link: "s2" tm_host: 0 }
  switch { name: "s2" node: 4 node: 3 }
)pb";

TEST(Topology, DefaultIsOneSwitchWithItsTmOnEveryNode) {
  const topology topo = topology::single_switch(4);
  EXPECT_EQ(topo.nodes(), 4u);
  EXPECT_EQ(topo.tokens_per_loop(), 2u);
  ASSERT_EQ(topo.switches().size(), 1u);
  EXPECT_THAT(topo.switches()[0].nodes, ElementsAre(0u, 1u, 2u, 3u));
  EXPECT_THAT(topo.switches()[0].neighbours, IsEmpty());
  EXPECT_EQ(topo.switches()[0].tm_host, 0u);
  for (std::uint32_t a = 0; a < 4; ++a) {
    EXPECT_EQ(topo.switch_of(a), 0u);
    for (std::uint32_t b = 0; b < 4; ++b) EXPECT_EQ(topo.distance(a, b), a == b ? 0u : 2u);
  }
  EXPECT_EQ(topo.diameter(), 2u);
  EXPECT_TRUE(topo.switches()[0].replicated_tm);
  EXPECT_THAT(topo.tm_nodes(0), ElementsAre(0u, 1u, 2u, 3u));
  for (std::uint32_t n = 0; n < 4; ++n) {
    EXPECT_THAT(topo.tms_hosted_by(n), ElementsAre(0u)) << "node " << n;
    EXPECT_EQ(topo.tm_serving(n), n);
  }
}

TEST(Topology, OneSwitchFileReplicatesUnlessItNamesATmHost) {
  const topology plain = parse_ok(R"pb(switch { name: "s0" node: 0 node: 1 node: 2 })pb", 3);
  EXPECT_TRUE(plain.switches()[0].replicated_tm);
  EXPECT_THAT(plain.tm_nodes(0), ElementsAre(0u, 1u, 2u));
  EXPECT_EQ(plain.tm_serving(2), 2u);

  const topology hosted =
      parse_ok(R"pb(switch { name: "s0" node: 0 node: 1 node: 2 tm_host: 1 })pb", 3);
  EXPECT_FALSE(hosted.switches()[0].replicated_tm);
  EXPECT_THAT(hosted.tm_nodes(0), ElementsAre(1u));
  EXPECT_EQ(hosted.tm_serving(2), 1u);
  EXPECT_THAT(hosted.tms_hosted_by(1), ElementsAre(0u));
  EXPECT_THAT(hosted.tms_hosted_by(2), IsEmpty());

  const topology single =
      parse_ok(R"pb(switch { name: "s0" node: 0 node: 1 node: 2 replicate_tm: false })pb", 3);
  EXPECT_FALSE(single.switches()[0].replicated_tm);
  EXPECT_THAT(single.tm_nodes(0), ElementsAre(0u));
  EXPECT_EQ(single.tm_serving(2), 0u);
}

TEST(Topology, OneNodeHasDiameterZero) {
  const topology topo = topology::single_switch(1);
  EXPECT_EQ(topo.distance(0, 0), 0u);
  EXPECT_EQ(topo.diameter(), 0u);
}

TEST(Topology, ChainDistancesGrowBySwitch) {
  const topology topo = parse_ok(chain_text, 5);
  ASSERT_EQ(topo.switches().size(), 3u);
  EXPECT_EQ(topo.tokens_per_loop(), 2u);                       // absent means the default
  EXPECT_THAT(topo.switches()[0].nodes, ElementsAre(0u, 1u));  // sorted
  EXPECT_THAT(topo.switches()[2].nodes, ElementsAre(3u, 4u));
  // Links are listed on one end only, yet both ends see them.
  EXPECT_THAT(topo.switches()[0].neighbours, ElementsAre(1u));
  EXPECT_THAT(topo.switches()[1].neighbours, ElementsAre(0u, 2u));
  EXPECT_THAT(topo.switches()[2].neighbours, ElementsAre(1u));
  EXPECT_EQ(topo.switch_of(1), 0u);
  EXPECT_EQ(topo.switch_of(2), 1u);
  EXPECT_EQ(topo.switch_of(4), 2u);

  EXPECT_EQ(topo.distance(0, 1), 2u);  // same switch: 1 * K
  EXPECT_EQ(topo.distance(0, 2), 4u);  // adjacent: 2 * K
  EXPECT_EQ(topo.distance(2, 4), 4u);
  EXPECT_EQ(topo.distance(1, 3), 6u);  // across the chain: 3 * K
  EXPECT_EQ(topo.distance(4, 0), 6u);
  EXPECT_EQ(topo.distance(3, 3), 0u);
  EXPECT_EQ(topo.diameter(), 6u);
  EXPECT_EQ(topo.switches_on_path(0, 2), 3u);

  EXPECT_EQ(topo.next_switch(0, 1), 1u);
  EXPECT_EQ(topo.next_switch(0, 2), 1u);
  EXPECT_EQ(topo.next_switch(1, 0), 0u);
  EXPECT_EQ(topo.next_switch(1, 2), 2u);
  EXPECT_EQ(topo.next_switch(2, 0), 1u);
}

TEST(Topology, ChainTmHostsDefaultToLowestNodeOrFollowTheFile) {
  const topology topo = parse_ok(chain_text, 5);
  EXPECT_EQ(topo.switches()[0].tm_host, 0u);  // default: lowest attached node
  EXPECT_EQ(topo.switches()[1].tm_host, 0u);  // explicit, on another switch's node
  EXPECT_EQ(topo.switches()[2].tm_host, 3u);  // default, though listed second
  EXPECT_THAT(topo.tms_hosted_by(0), ElementsAre(0u, 1u));
  EXPECT_THAT(topo.tms_hosted_by(3), ElementsAre(2u));
  EXPECT_THAT(topo.tms_hosted_by(2), IsEmpty());
  EXPECT_THAT(topo.tms_hosted_by(4), IsEmpty());
  // Linked switches never replicate their TMs.
  for (const switch_info& sw : topo.switches()) EXPECT_FALSE(sw.replicated_tm) << sw.name;
  EXPECT_EQ(topo.tm_serving(1), 0u);
  EXPECT_EQ(topo.tm_serving(4), 3u);
}

TEST(Topology, LinkListedOnBothEndsCountsOnce) {
  const topology topo = parse_ok(R"pb(
                                   switch { name: "a" node: 0 link: "b" link: "b" }
                                   switch { name: "b" node: 1 link: "a" }
                                 )pb",
                                 2);
  EXPECT_THAT(topo.switches()[0].neighbours, ElementsAre(1u));
  EXPECT_THAT(topo.switches()[1].neighbours, ElementsAre(0u));
  EXPECT_EQ(topo.distance(0, 1), 4u);
  EXPECT_EQ(topo.diameter(), 4u);
}

TEST(Topology, RelaySwitchWithoutNodesInTheMiddle) {
  // The relay is as near to "left" as to "right": the tie goes to the earlier switch.
  const topology topo = parse_ok(R"pb(
                                   switch { name: "left" node: 0 node: 1 }
                                   switch { name: "relay" link: "left" link: "right" }
                                   switch { name: "right" node: 2 node: 3 }
                                 )pb",
                                 4);
  EXPECT_THAT(topo.switches()[1].nodes, IsEmpty());
  EXPECT_EQ(topo.switches()[1].tm_host, 0u);
  EXPECT_EQ(topo.distance(0, 1), 2u);
  EXPECT_EQ(topo.distance(1, 2), 6u);
  EXPECT_EQ(topo.diameter(), 6u);
  EXPECT_EQ(topo.next_switch(0, 2), 1u);
  EXPECT_EQ(topo.next_switch(1, 2), 2u);
  EXPECT_THAT(topo.tms_hosted_by(0), ElementsAre(0u, 1u));
  EXPECT_THAT(topo.tms_hosted_by(2), ElementsAre(2u));
}

TEST(Topology, RelaySwitchAtTheEdgeTakesTheNearestTmAndNoDiameter) {
  // "edge" is nearer to "mid" (node 1) than to "far" (node 0); an empty switch is no endpoint.
  const topology topo = parse_ok(R"pb(
                                   switch { name: "far" node: 0 link: "mid" }
                                   switch { name: "mid" node: 1 link: "edge" }
                                   switch { name: "edge" }
                                 )pb",
                                 2);
  EXPECT_EQ(topo.switches()[2].tm_host, 1u);
  EXPECT_EQ(topo.diameter(), 4u);
}

TEST(Topology, TokensPerLoopScalesDistances) {
  const topology one = parse_ok(std::string("tokens_per_loop: 1\n") + chain_text, 5);
  EXPECT_EQ(one.tokens_per_loop(), 1u);
  EXPECT_EQ(one.distance(0, 1), 1u);
  EXPECT_EQ(one.distance(0, 2), 2u);
  EXPECT_EQ(one.distance(0, 3), 3u);
  EXPECT_EQ(one.diameter(), 3u);

  const topology three = parse_ok(std::string("tokens_per_loop: 3\n") + chain_text, 5);
  EXPECT_EQ(three.distance(0, 1), 3u);
  EXPECT_EQ(three.distance(0, 2), 6u);
  EXPECT_EQ(three.distance(0, 3), 9u);
  EXPECT_EQ(three.diameter(), 9u);

  EXPECT_EQ(topology::single_switch(3, 3).distance(0, 2), 3u);
  EXPECT_EQ(parse_ok("tokens_per_loop: 8 switch { name: \"s\" node: 0 }", 1).tokens_per_loop(), 8u);
  EXPECT_EQ(parse_ok("tokens_per_loop: 0 switch { name: \"s\" node: 0 }", 1).tokens_per_loop(), 2u);
}

TEST(TopologyErrors, SyntaxErrorGivesLineAndColumn) {
  expect_invalid("switch {\n  name: \"s0\"\n  node: }\n", 1,
                 {"topology line 3, column 9", "Expected integer, got: }"});
  expect_invalid("switch {\n  name: \"s0\"\n  nodes: 0\n}\n", 1,
                 {"topology line 3, column 8", "no field named \"nodes\""});
  expect_invalid("tokens_per_loop: 2\ntokens_per_loop: 3\n", 1, {"topology line 2"});
}

TEST(TopologyErrors, NodeOutsideTheJob) {
  expect_invalid(R"pb(switch { name: "s0" node: 0 node: 1 link: "s1" }
                      switch { name: "s1" node: 2 node: 3 node: 9 })pb",
                 4, {"switch \"s1\" lists node 9 but the job has 4 nodes"});
}

TEST(TopologyErrors, NodeOnNoSwitch) {
  expect_invalid(R"pb(switch { name: "s0" node: 0 node: 1 node: 3 })pb", 4,
                 {"node 2 is attached to no switch"});
}

TEST(TopologyErrors, NodeOnTwoSwitches) {
  expect_invalid(R"pb(switch { name: "s0" node: 0 node: 1 link: "s1" }
                      switch { name: "s1" node: 1 })pb",
                 2, {"node 1 is attached to two switches, \"s0\" and \"s1\""});
  expect_invalid(R"pb(switch { name: "s0" node: 0 node: 1 node: 0 })pb", 2,
                 {"switch \"s0\" lists node 0 twice"});
}

TEST(TopologyErrors, SwitchNames) {
  expect_invalid(R"pb(switch { name: "s0" node: 0 link: "s1" }
                      switch { node: 1 })pb",
                 2, {"switch 1 (counting from 0) has an empty name"});
  expect_invalid(R"pb(switch { name: "s0" node: 0 link: "s1" }
                      switch { name: "s1" node: 1 }
                      switch { name: "s0" node: 2 })pb",
                 3, {"switch name \"s0\" is used twice (switches 0 and 2)"});
}

TEST(TopologyErrors, BadLinks) {
  expect_invalid(R"pb(switch { name: "s0" node: 0 link: "s9" })pb", 1,
                 {"switch \"s0\" links to unknown switch \"s9\""});
  expect_invalid(R"pb(switch { name: "s0" node: 0 link: "s0" })pb", 1,
                 {"switch \"s0\" links to itself"});
}

TEST(TopologyErrors, SwitchGraphNotConnected) {
  expect_invalid(R"pb(switch { name: "s0" node: 0 link: "s1" }
                      switch { name: "s1" node: 1 }
                      switch { name: "island" node: 2 })pb",
                 3, {"switch \"island\" is not connected to switch \"s0\""});
}

TEST(TopologyErrors, SwitchGraphWithCycle) {
  expect_invalid(R"pb(switch { name: "a" node: 0 link: "b" }
                      switch { name: "b" node: 1 link: "c" }
                      switch { name: "c" node: 2 link: "a" })pb",
                 3, {"cycle", "\"b\"", "\"c\"", "tree"});
  // The named switches lie on the cycle, not on the tail that leads to it.
  const absl::StatusOr<topology> tail = parse_topology(
      R"pb(switch { name: "tail" node: 0 link: "x" }
           switch { name: "x" link: "y" link: "z" }
           switch { name: "y" link: "z" }
           switch { name: "z" })pb",
      1);
  ASSERT_FALSE(tail.ok());
  EXPECT_EQ(tail.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(tail.status().message()), HasSubstr("cycle"));
  EXPECT_THAT(std::string(tail.status().message()), Not(HasSubstr("\"tail\"")));
}

TEST(TopologyErrors, TmHostOutsideTheJob) {
  expect_invalid(R"pb(switch { name: "s0" node: 0 node: 1 tm_host: 7 })pb", 2,
                 {"switch \"s0\" has tm_host 7 but the job has 2 nodes"});
}

TEST(TopologyErrors, ReplicatedTmOnlyOnAnUnlinkedSwitchWithNodesAndNoHost) {
  expect_invalid(R"pb(switch { name: "a" node: 0 link: "b" replicate_tm: true }
                      switch { name: "b" node: 1 })pb",
                 2, {"switch \"a\" replicates its TM but has links"});
  expect_invalid(R"pb(switch { name: "s0" node: 0 node: 1 tm_host: 1 replicate_tm: true })pb", 2,
                 {"switch \"s0\" has both tm_host and replicate_tm"});
  expect_invalid(R"pb(switch { name: "a" node: 0 node: 1 }
                      switch { name: "empty" replicate_tm: true })pb",
                 2, {"switch \"empty\" replicates its TM but has no nodes"});
}

TEST(TopologyErrors, NoSwitches) {
  expect_invalid("", 1, {"no switches"});
  expect_invalid("tokens_per_loop: 3", 1, {"no switches"});
}

TEST(TopologyErrors, TokensPerLoopAboveEight) {
  expect_invalid(R"pb(tokens_per_loop: 9
                      switch { name: "s0" node: 0 })pb",
                 1, {"tokens_per_loop 9 is above the maximum of 8"});
}

TEST(TopologyErrors, JobWithoutNodes) {
  expect_invalid(R"pb(switch { name: "s0" })pb", 0, {"at least one node, got 0"});
}

TEST(TopologyFiles, ExamplesParse) {
  const std::string dir = std::string(ISO_SOURCE_DIR) + "/nicfw/examples/";
  const absl::StatusOr<topology> one = load_topology(dir + "one-switch.textproto", 4);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->switches().size(), 1u);
  EXPECT_EQ(one->diameter(), 2u);
  EXPECT_TRUE(one->switches()[0].replicated_tm);
  EXPECT_THAT(one->tms_hosted_by(3), ElementsAre(0u));

  const absl::StatusOr<topology> two = load_topology(dir + "two-switches.textproto", 4);
  ASSERT_TRUE(two.ok()) << two.status();
  ASSERT_EQ(two->switches().size(), 2u);
  EXPECT_EQ(two->distance(0, 1), 2u);
  EXPECT_EQ(two->distance(1, 2), 4u);
  EXPECT_EQ(two->diameter(), 4u);
  EXPECT_EQ(two->switches()[0].tm_host, 0u);
  EXPECT_EQ(two->switches()[1].tm_host, 3u);
}

TEST(TopologyFiles, ErrorsNameTheFile) {
  const std::string missing = "/nonexistent/iso-topology.textproto";
  const absl::StatusOr<topology> absent = load_topology(missing, 4);
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(absent.status().message()), HasSubstr(missing));

  char path[] = "/tmp/iso-topology-test-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  const std::string bad = "switch {\n  name: \"s0\"\n  node: 9\n}\n";
  ASSERT_EQ(::write(fd, bad.data(), bad.size()), static_cast<ssize_t>(bad.size()));
  ::close(fd);
  const absl::StatusOr<topology> invalid = load_topology(path, 4);
  std::remove(path);
  ASSERT_FALSE(invalid.ok());
  EXPECT_EQ(invalid.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(invalid.status().message()), HasSubstr(path));
  EXPECT_THAT(std::string(invalid.status().message()), HasSubstr("lists node 9"));
}

}  // namespace
}  // namespace iso::nicfw
