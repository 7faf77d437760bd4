// A token manager against a scripted wire (scripted_wire.hpp): the test plays the SIUs of its
// switch and the TMs of adjacent switches, feeds it siu_token, link_token, demand, park and
// unpark packets, and reads the tokens, demands and unparked answers it sends. The cases
// follow the TM's rules (Regehr's isonet TM, as nicfw/token_manager.hpp adapts it):
//  - with K tokens per loop it sends token q + K to every output once every input has sent
//    token q (for K = 1: token q from every input closes pulse q), never beyond the highest
//    demand, a burst as its last token;
//  - it forwards each (sender, destination) count once, only towards the destination;
//  - demands flood to every other input that is not parked;
//  - a parked SIU is not waited for; an unpark is answered with the TM's pulse, which is at
//    least every token the other SIUs have had;
//  - a replicated TM's copy serves its own node only;
//  - input from a node or switch that is no input of this TM, counts for a pair the sender
//    cannot know of, and tokens out of order are InvalidArgument naming the sender.
#include "nicfw/token_manager.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "tests/unit/nicfw/scripted_wire.hpp"

namespace iso::nicfw {
namespace {

using scripted::count_triple;
using scripted::link_token;
using scripted::park;
using scripted::scripted_wire;
using scripted::siu_demand;
using scripted::siu_token;
using scripted::triples;
using scripted::wire_packet;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

// Nodes 0, 1 and 2 on one switch, its single TM on node 0 (so what it sends node 0 comes
// back through the loopback queue).
topology single_tm(std::uint32_t tokens_per_loop) {
  absl::StatusOr<topology> topo = parse_topology(absl::StrFormat(R"(tokens_per_loop: %u
                         switch { name: "s0" node: 0 node: 1 node: 2 tm_host: 0 })",
                                                                 tokens_per_loop),
                                                 3);
  EXPECT_TRUE(topo.ok()) << topo.status();
  return *topo;
}

// Switch 0 ("left": nodes 0 and 1, its TM on node 0) linked to switch 1 ("right": nodes 2
// and 3, its TM on node 3).
topology two_switches() {
  absl::StatusOr<topology> topo = parse_topology(R"(
      switch { name: "left" node: 0 node: 1 link: "right" }
      switch { name: "right" node: 2 node: 3 tm_host: 3 })",
                                                 4);
  EXPECT_TRUE(topo.ok()) << topo.status();
  return *topo;
}

struct tm_under_test {
  tm_under_test(topology t, std::uint32_t switch_index, comm::node_id self)
      : topo(std::move(t)), wire(topo, self), unit(switch_index, self, topo, wire.out) {}

  bool advance() {
    bool did_work = false;
    EXPECT_TRUE(unit.advance(did_work).ok());
    return did_work;
  }
  void feed(comm::node_id from, const wire_packet& p) {
    const absl::Status s = wire.feed(unit, from, p);
    EXPECT_TRUE(s.ok()) << s;
  }
  // Token q from each of `nodes` (SIUs of switch 0).
  void tokens_from(std::initializer_list<comm::node_id> nodes, std::uint64_t q,
                   std::uint64_t want = 0) {
    for (comm::node_id n : nodes) feed(n, siu_token(0, n, q, want, {}));
  }
  std::vector<std::uint64_t> tokens_to(comm::node_id node) {
    return wire.stamps_to(node, packet_type::tm_token);
  }

  topology topo;
  scripted_wire wire;
  token_manager unit;
};

wire_packet unpark() { return scripted::header_only(packet_type::unpark, 0, 0, 0); }

TEST(TokenManager, SendsTheNextTokenOnceEveryInputSentItsToken) {
  tm_under_test t(single_tm(/*tokens_per_loop=*/1), 0, 0);
  t.feed(1, siu_demand(0, 3));  // someone needs token 3
  EXPECT_TRUE(t.advance());     // token 1 is in the loop from the start
  EXPECT_FALSE(t.advance());
  t.tokens_from({0, 1}, 1);
  EXPECT_FALSE(t.advance());  // node 2 has not sent token 1
  t.tokens_from({2}, 1);
  EXPECT_TRUE(t.advance());
  t.tokens_from({2, 0, 1}, 2);
  EXPECT_TRUE(t.advance());
  t.tokens_from({0, 1, 2}, 3);
  EXPECT_FALSE(t.advance());  // nobody needs token 4
  EXPECT_EQ(t.unit.pulse(), 3u);
  for (comm::node_id n : {0u, 1u, 2u}) {
    EXPECT_THAT(t.tokens_to(n), ElementsAre(1u, 2u, 3u)) << "node " << n;
    for (const wire_packet& p : t.wire.sent_to(n)) {
      if (p.header.type != packet_type::tm_token) continue;
      EXPECT_EQ(p.header.to_switch, kToSiu);
      EXPECT_EQ(p.header.a, 0u);  // from switch 0
      EXPECT_EQ(p.body.want, 3u);
    }
  }
}

TEST(TokenManager, KeepsKTokensInEachLoopAndSendsABurstAsItsLastToken) {
  tm_under_test t(single_tm(/*tokens_per_loop=*/2), 0, 0);
  t.feed(0, siu_demand(0, 20));
  EXPECT_TRUE(t.advance());
  EXPECT_EQ(t.unit.pulse(), 2u);  // K = 2 tokens before any input
  t.tokens_from({0, 1, 2}, 1);
  t.tokens_from({0, 1}, 3);
  t.tokens_from({0, 1, 2}, 4);
  EXPECT_TRUE(t.advance());
  for (comm::node_id n : {0u, 1u, 2u}) EXPECT_THAT(t.tokens_to(n), ElementsAre(2u, 6u));
}

TEST(TokenManager, FloodsADemandToEveryOtherInputOnce) {
  tm_under_test t(two_switches(), 0, 0);
  t.feed(1, siu_demand(0, 10));
  t.feed(1, siu_demand(0, 8));  // known already
  EXPECT_THAT(t.wire.sent_to(1), IsEmpty());
  EXPECT_THAT(t.wire.stamps_to(0, packet_type::demand), ElementsAre(10u));
  ASSERT_THAT(t.wire.stamps_to(3, packet_type::demand), ElementsAre(10u));
  EXPECT_EQ(t.wire.last_to(0).header.to_switch, kToSiu);
  EXPECT_EQ(t.wire.last_to(3).header.to_switch, 1u);  // the right switch's TM
  EXPECT_EQ(t.wire.last_to(3).header.a, 0u);          // from the left one
  t.wire.forget();
  ASSERT_TRUE(t.wire.feed(t.unit, 3, scripted::header_only(packet_type::demand, 0, 1, 12)).ok());
  EXPECT_THAT(t.wire.stamps_to(0, packet_type::demand), ElementsAre(12u));
  EXPECT_THAT(t.wire.stamps_to(1, packet_type::demand), ElementsAre(12u));
  EXPECT_THAT(t.wire.sent_to(3), IsEmpty());  // not back to where it came from
}

TEST(TokenManager, ForwardsEachCountOnceAndOnlyTowardsItsDestination) {
  tm_under_test t(two_switches(), 0, 0);
  t.feed(0, siu_demand(0, 10));
  ASSERT_TRUE(t.advance());
  t.wire.forget();
  t.feed(0, siu_token(0, 0, 2, 10,
                      {{.source = 0, .destination = 1, .count = 3},
                       {.source = 0, .destination = 2, .count = 1},
                       {.source = 0, .destination = 3, .count = 2}}));
  t.feed(1, siu_token(0, 1, 2, 10, {{.source = 1, .destination = 0, .count = 1}}));
  t.feed(3, link_token(0, 1, 2, 10,
                       {{.source = 2, .destination = 0, .count = 5},
                        {.source = 3, .destination = 1, .count = 1},
                        {.source = 2, .destination = 1, .count = 4}}));
  ASSERT_TRUE(t.advance());
  EXPECT_THAT(t.tokens_to(0), ElementsAre(4u));
  EXPECT_THAT(triples(t.wire.last_to(0).counts),
              UnorderedElementsAre(count_triple{1, 0, 1}, count_triple{2, 0, 5}));
  EXPECT_THAT(t.tokens_to(1), ElementsAre(4u));
  EXPECT_THAT(
      triples(t.wire.last_to(1).counts),
      UnorderedElementsAre(count_triple{0, 1, 3}, count_triple{3, 1, 1}, count_triple{2, 1, 4}));
  const wire_packet link = t.wire.last_to(3);
  EXPECT_EQ(link.header.type, packet_type::link_token);
  EXPECT_EQ(link.header.stamp, 4u);
  EXPECT_EQ(link.header.to_switch, 1u);
  EXPECT_EQ(link.header.a, 0u);
  EXPECT_THAT(triples(link.counts),
              UnorderedElementsAre(count_triple{0, 2, 1}, count_triple{0, 3, 2}));
  // Old news (a count already forwarded, or a lower one) is not forwarded again.
  t.wire.forget();
  t.feed(0, siu_token(0, 0, 4, 10, {{.source = 0, .destination = 1, .count = 2}}));
  t.feed(1, siu_token(0, 1, 4, 10, {{.source = 1, .destination = 0, .count = 1}}));
  t.feed(3, link_token(0, 1, 4, 10, {{.source = 2, .destination = 1, .count = 4}}));
  ASSERT_TRUE(t.advance());
  for (comm::node_id n : {0u, 1u, 3u}) {
    ASSERT_EQ(t.wire.sent_to(n).size(), 1u) << "node " << n;
    EXPECT_EQ(t.wire.last_to(n).header.stamp, 6u);
    EXPECT_THAT(t.wire.last_to(n).counts, IsEmpty()) << "node " << n;
  }
}

TEST(TokenManager, WaitsForTheLinkToo) {
  tm_under_test t(two_switches(), 0, 0);
  t.feed(0, siu_demand(0, 10));
  ASSERT_TRUE(t.advance());
  t.tokens_from({0, 1}, 2);
  EXPECT_FALSE(t.advance());
  t.feed(3, link_token(0, 1, 2, 10, {}));
  EXPECT_TRUE(t.advance());
  EXPECT_THAT(t.wire.stamps_to(3, packet_type::link_token), ElementsAre(2u, 4u));
}

TEST(TokenManager, DoesNotWaitForAParkedSiu) {
  tm_under_test t(single_tm(/*tokens_per_loop=*/2), 0, 0);
  t.feed(0, siu_demand(0, 20));
  ASSERT_TRUE(t.advance());
  t.tokens_from({0, 1}, 2);
  EXPECT_FALSE(t.advance());  // node 2 holds it up
  t.feed(2, park(0, 2, 0, {{.source = 2, .destination = 1, .count = 1}}));
  EXPECT_TRUE(t.advance());
  // A parked SIU still gets tokens: it receives isotach packets and must close pulses.
  for (comm::node_id n : {0u, 1u, 2u}) EXPECT_THAT(t.tokens_to(n), ElementsAre(2u, 4u));
  EXPECT_THAT(triples(t.wire.last_to(1).counts), ElementsAre(count_triple{2, 1, 1}));
  // But no demands: it has promised to stamp nothing.
  t.wire.forget();
  t.feed(0, siu_demand(0, 30));
  EXPECT_THAT(t.wire.stamps_to(1, packet_type::demand), ElementsAre(30u));
  EXPECT_THAT(t.wire.sent_to(2), IsEmpty());
  t.tokens_from({0, 1}, 4);
  EXPECT_TRUE(t.advance());
  t.tokens_from({0, 1}, 6);
  EXPECT_TRUE(t.advance());
  EXPECT_EQ(t.unit.pulse(), 8u);
}

TEST(TokenManager, UnparkedAnswerIsAtLeastEveryTokenOthersHaveHad) {
  tm_under_test t(single_tm(/*tokens_per_loop=*/2), 0, 0);
  t.feed(0, siu_demand(0, 30));
  t.feed(2, park(0, 2, 0, {}));
  ASSERT_TRUE(t.advance());
  for (std::uint64_t q : {2u, 4u, 6u}) {
    t.tokens_from({0, 1}, q);
    ASSERT_TRUE(t.advance());
  }
  ASSERT_THAT(t.tokens_to(1), ElementsAre(2u, 4u, 6u, 8u));
  t.feed(2, unpark());
  const std::vector<std::uint64_t> answers = t.wire.stamps_to(2, packet_type::unparked);
  ASSERT_THAT(answers, ElementsAre(8u));
  EXPECT_EQ(t.wire.last_to(2).header.a, 0u);  // from switch 0
  // From here on it is waited for again, from its answer on.
  t.tokens_from({0, 1}, 8);
  EXPECT_TRUE(t.advance());  // 10: its answer + K
  t.tokens_from({0, 1}, 10);
  EXPECT_FALSE(t.advance());
  const absl::Status stale = t.wire.feed(t.unit, 2, siu_token(0, 2, 8, 30, {}));
  EXPECT_EQ(stale.code(), absl::StatusCode::kInvalidArgument) << stale;
  t.tokens_from({2}, 10);
  EXPECT_TRUE(t.advance());
  EXPECT_THAT(t.tokens_to(0), ElementsAre(2u, 4u, 6u, 8u, 10u, 12u));
}

TEST(TokenManager, ReplicatedCopyServesItsOwnNodeOnly) {
  tm_under_test t(topology::single_switch(3), 0, /*self=*/1);
  t.feed(0, siu_demand(0, 10));
  ASSERT_TRUE(t.advance());
  t.feed(0, siu_token(0, 0, 2, 10,
                      {{.source = 0, .destination = 1, .count = 1},
                       {.source = 0, .destination = 2, .count = 1}}));
  t.feed(2, siu_token(0, 2, 2, 10,
                      {{.source = 2, .destination = 1, .count = 3},
                       {.source = 2, .destination = 0, .count = 1}}));
  t.tokens_from({1}, 2, 10);
  ASSERT_TRUE(t.advance());
  EXPECT_THAT(t.wire.sent_to(0), IsEmpty());
  EXPECT_THAT(t.wire.sent_to(2), IsEmpty());
  EXPECT_THAT(t.wire.stamps_to(1, packet_type::demand), ElementsAre(10u));
  EXPECT_THAT(t.tokens_to(1), ElementsAre(2u, 4u));
  EXPECT_THAT(triples(t.wire.last_to(1).counts),
              UnorderedElementsAre(count_triple{0, 1, 1}, count_triple{2, 1, 3}));
  // Every copy answers an unpark, to the node that asked.
  t.feed(0, park(0, 0, 2, {}));
  t.feed(0, unpark());
  EXPECT_THAT(t.wire.stamps_to(0, packet_type::unparked), ElementsAre(4u));
}

TEST(TokenManager, ParkAndUnparkOutOfTurnAreInvalidArgument) {
  tm_under_test t(single_tm(/*tokens_per_loop=*/2), 0, 0);
  t.feed(0, siu_demand(0, 20));
  t.tokens_from({2}, 2);
  const struct {
    comm::node_id from;
    wire_packet packet;
    const char* says;
  } cases[] = {
      {1, unpark(), "node 1 unparks but is not parked"},
      {2, park(0, 2, 1, {}), "node 2 parks at token 1; switch 0 has its token 2"},
  };
  for (const auto& c : cases) {
    const absl::Status s = t.wire.feed(t.unit, c.from, c.packet);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.says));
  }
  t.feed(2, park(0, 2, 2, {}));
  absl::Status s = t.wire.feed(t.unit, 2, park(0, 2, 2, {}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("node 2 parks at token 2"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("already parked"));
  s = t.wire.feed(t.unit, 2, siu_token(0, 2, 4, 20, {}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("from node 2, got 4 while it is parked"));
}

TEST(TokenManager, MalformedInputIsInvalidArgumentNamingTheSender) {
  tm_under_test t(two_switches(), 0, 0);
  const struct {
    comm::node_id from;
    wire_packet packet;
    const char* says;
  } cases[] = {
      {2, siu_token(0, 2, 1, 0, {}), "token from node 2, which is not attached to switch 0"},
      {9, siu_token(0, 9, 1, 0, {}), "token from node 9, which is not attached"},
      {1,
       siu_token(0, 1, 1, 0,
                 {{.source = 1, .destination = 0, .count = 5},
                  {.source = 0, .destination = 1, .count = 1}}),
       "token from node 1 carries a count for pair 0->1"},
      {1, siu_token(0, 1, 1, 0, {{.source = 1, .destination = 7, .count = 1}}),
       "token from node 1 carries a count for pair 1->7"},
      {3, link_token(0, 5, 1, 0, {}), "token from switch 5, which is not adjacent to switch 0"},
      {3, link_token(0, 1, 1, 0, {{.source = 2, .destination = 6, .count = 1}}),
       "token from switch 1 carries a count for pair 2->6"},
      {3, siu_demand(0, 4), "demand from node 3, which is not attached to switch 0"},
      {3, scripted::header_only(packet_type::demand, 0, 7, 4),
       "demand from switch 7, which is not adjacent to switch 0"},
      {2, park(0, 2, 0, {}), "park from node 2, which is not attached to switch 0"},
      {1, park(0, 1, 0, {{.source = 0, .destination = 1, .count = 1}}),
       "park from node 1 carries a count for pair 0->1"},
      {3, unpark(), "unpark from node 3, which is not attached to switch 0"},
  };
  for (const auto& c : cases) {
    const absl::Status s = t.wire.feed(t.unit, c.from, c.packet);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.says << ": " << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.says));
  }
  EXPECT_EQ(t.wire.total_sent(), 0u);
  // A token must come after the sender's last one.
  t.feed(0, siu_token(0, 0, 2, 0, {}));
  const absl::Status repeated = t.wire.feed(t.unit, 0, siu_token(0, 0, 2, 0, {}));
  EXPECT_EQ(repeated.code(), absl::StatusCode::kInvalidArgument) << repeated;
  EXPECT_THAT(std::string(repeated.message()),
              HasSubstr("switch 0 expected a token after 2 from node 0, got 2"));
  // Nothing refused left a trace: node 1's count for node 0 came with a bad entry, and node
  // 1 was never parked.
  t.feed(0, siu_demand(0, 10));
  t.tokens_from({1}, 2);
  t.feed(3, link_token(0, 1, 2, 10, {}));
  ASSERT_TRUE(t.advance());
  EXPECT_THAT(t.tokens_to(0), ElementsAre(4u));
  EXPECT_THAT(t.wire.last_to(0).counts, IsEmpty());
  t.tokens_from({0}, 4);
  t.feed(3, link_token(0, 1, 4, 10, {}));
  EXPECT_FALSE(t.advance()) << "node 1 was taken for parked";
}

// A park's counts were taken one by one as they were checked, so a park refused for its
// second entry had already forwarded its first.
TEST(TokenManager, RefusedParkLeavesNoCountBehind) {
  tm_under_test t(two_switches(), 0, 0);
  const absl::Status s = t.wire.feed(t.unit, 1,
                                     park(0, 1, 0,
                                          {{.source = 1, .destination = 0, .count = 5},
                                           {.source = 1, .destination = 9, .count = 1}}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("park from node 1 carries a count for pair 1->9"));
  t.feed(0, siu_demand(0, 10));
  ASSERT_TRUE(t.advance());
  EXPECT_THAT(t.tokens_to(0), ElementsAre(2u));
  EXPECT_THAT(t.wire.last_to(0).counts, IsEmpty());
}

}  // namespace
}  // namespace iso::nicfw
