// The switch interface unit against a scripted wire (scripted_wire.hpp): the test plays its
// TM and the other nodes, feeds it tm_token, demand, unparked and iso_data packets, and
// reads the tokens, demands, parks and unparks it sends. The cases follow the SIU's rules
// (Regehr's isonet SIU, as nicfw/siu.hpp adapts it):
//  - an isochron is stamped R = max(R_prev, t + delta), t the last token sent: R never
//    decreases;
//  - for the pulses others want, the SIU sends at most K tokens beyond the last TM token, a
//    burst as its last token; for its own stamps it goes to its last stamp at once;
//  - its tokens carry the cumulative count of isotach packets sent per destination, once;
//  - pulse p closes only once every packet each sender counted for it has arrived, and an
//    isotach packet for a closed pulse is FailedPrecondition;
//  - time is lazy: without demand nothing is sent; a demand moves time as far as needed;
//  - an idle SIU parks, and resumes from its TM's (every copy's) answer, never below the TM
//    tokens it received while parked (stamp_base).
#include "nicfw/siu.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "nicfw/token_manager.hpp"
#include "tests/unit/nicfw/scripted_wire.hpp"

namespace iso::nicfw {
namespace {

using scripted::count_triple;
using scripted::iso_data;
using scripted::scripted_wire;
using scripted::tm_token;
using scripted::triples;
using scripted::wire_packet;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr siu::remote_tokens kNow = siu::remote_tokens::now;
constexpr siu::remote_tokens kNextRound = siu::remote_tokens::next_round;

// Nodes 0, 1 and 2 on one switch whose single TM runs on node 0: the SIU under test is node
// 1's, so everything it sends its TM is a packet to node 0.
topology single_tm(std::uint32_t tokens_per_loop = 2) {
  absl::StatusOr<topology> topo = parse_topology(absl::StrFormat(R"(tokens_per_loop: %u
                         switch { name: "s0" node: 0 node: 1 node: 2 tm_host: 0 })",
                                                                 tokens_per_loop),
                                                 3);
  EXPECT_TRUE(topo.ok()) << topo.status();
  return *topo;
}

struct siu_under_test {
  explicit siu_under_test(topology t, comm::node_id self = 1)
      : topo(std::move(t)), wire(topo, self), unit(self, topo, wire.out) {}

  // One advance() round; returns whether it did work.
  bool advance(siu::remote_tokens when = kNow) {
    bool did_work = false;
    EXPECT_TRUE(unit.advance(did_work, when).ok());
    return did_work;
  }
  void feed(comm::node_id from, const wire_packet& p) {
    const absl::Status s = wire.feed(unit, from, p);
    EXPECT_TRUE(s.ok()) << s;
  }
  // The siu_token stamps sent to node `tm`.
  std::vector<std::uint64_t> tokens_to(comm::node_id tm = 0) {
    return wire.stamps_to(tm, packet_type::siu_token);
  }
  // Advances until the SIU parks (it does after a bounded number of idle rounds).
  void idle_until_parked() {
    for (int round = 0; round < 5000 && unit.may_stamp(); ++round) advance(kNextRound);
    ASSERT_FALSE(unit.may_stamp()) << "an idle SIU never parked";
  }

  topology topo;
  scripted_wire wire;
  siu unit;
};

wire_packet unparked(std::uint32_t from_switch, std::uint64_t resume_from) {
  return scripted::header_only(packet_type::unparked, kToSiu, from_switch, resume_from);
}

TEST(Siu, StampIsLastTokenPlusDeltaAndNeverDecreases) {
  siu_under_test t(single_tm());
  EXPECT_EQ(t.unit.stamp(4), 4u);
  EXPECT_EQ(t.unit.stamp(2), 4u);  // t + delta = 2, but R_prev = 4
  EXPECT_EQ(t.unit.stamp(0), 4u);
  ASSERT_TRUE(t.advance());
  EXPECT_EQ(t.unit.pulse(), 4u);  // its last stamp, at once
  EXPECT_EQ(t.unit.stamp(1), 5u);
  EXPECT_EQ(t.unit.stamp(0), 5u);
  EXPECT_EQ(t.unit.stamp(3), 7u);
  EXPECT_EQ(t.unit.last_stamp(), 7u);
  ASSERT_TRUE(t.advance());
  EXPECT_THAT(t.tokens_to(), ElementsAre(4u, 7u));
}

TEST(Siu, SendsAtMostKTokensBeyondTheLastTmTokenForOthersPulses) {
  siu_under_test t(single_tm(/*tokens_per_loop=*/2));
  t.unit.on_demand(12);  // its TM sends token 12 once every SIU has sent 10
  EXPECT_TRUE(t.advance());
  EXPECT_FALSE(t.advance());  // the window is full until the TM answers
  std::uint64_t tm = 0;
  for (std::uint64_t next : {1u, 2u, 4u, 8u, 10u}) {
    EXPECT_LE(t.unit.pulse(), tm + 2);
    tm = next;
    t.feed(0, tm_token(0, tm, 0, {}));
    t.advance();
  }
  // A burst travels as its last token (6, not 5 and 6); nothing beyond what was wanted.
  EXPECT_THAT(t.tokens_to(), ElementsAre(2u, 3u, 4u, 6u, 10u));
  for (const wire_packet& p : t.wire.sent_to(0)) {
    EXPECT_EQ(p.header.to_switch, 0u);  // its switch's TM
    EXPECT_EQ(p.header.a, 1u);          // from node 1
    EXPECT_EQ(p.body.want, 12u);        // the pulse wanted
  }
}

// Its own isochron's pulse closes at a receiver once every SIU has sent the token before
// it: the SIU gets there without waiting for its TM, so the others need nothing more from
// this node (whose host, with the NIC inline, may be away computing). It opens no window
// for anything else.
TEST(Siu, GoesToItsLastStampAtOncePastTheWindow) {
  siu_under_test t(single_tm(/*tokens_per_loop=*/2));
  ASSERT_EQ(t.unit.stamp(10), 10u);
  EXPECT_TRUE(t.advance());
  EXPECT_EQ(t.unit.pulse(), 10u);
  EXPECT_FALSE(t.advance());
  t.unit.on_demand(20);  // others need token 18 from here: the window still paces that
  EXPECT_FALSE(t.advance());
  t.feed(0, tm_token(0, 9, 0, {}));
  EXPECT_TRUE(t.advance());
  EXPECT_THAT(t.tokens_to(), ElementsAre(10u, 11u));
  EXPECT_EQ(t.unit.stamp(2), 13u);  // from the pulse it has reached
}

TEST(Siu, TokensCarryCumulativeCountsThatChangedSinceTheLastToken) {
  siu_under_test t(single_tm());
  ASSERT_EQ(t.unit.stamp(2), 2u);
  t.unit.count_sent(0);
  t.unit.count_sent(2);
  t.unit.count_sent(2);
  ASSERT_TRUE(t.advance());
  EXPECT_THAT(triples(t.wire.last_to(0).counts),
              ElementsAre(count_triple{1, 0, 1}, count_triple{1, 2, 2}));
  t.feed(0, tm_token(0, 2, 0, {}));
  ASSERT_EQ(t.unit.stamp(2), 4u);
  t.unit.count_sent(2);
  ASSERT_TRUE(t.advance());
  EXPECT_THAT(triples(t.wire.last_to(0).counts), ElementsAre(count_triple{1, 2, 3}));
  t.feed(0, tm_token(0, 4, 0, {}));
  ASSERT_EQ(t.unit.stamp(2), 6u);
  ASSERT_TRUE(t.advance());
  EXPECT_THAT(t.wire.last_to(0).counts, IsEmpty());
  EXPECT_THAT(t.tokens_to(), ElementsAre(2u, 4u, 6u));
}

TEST(Siu, EachReplicatedTmCopyGetsEveryTokenButOnlyItsNodesCount) {
  siu_under_test t(topology::single_switch(3));
  ASSERT_EQ(t.unit.stamp(2), 2u);
  t.unit.count_sent(0);
  t.unit.count_sent(2);
  ASSERT_TRUE(t.advance());
  for (comm::node_id copy : {0u, 1u, 2u}) {
    EXPECT_THAT(t.tokens_to(copy), ElementsAre(2u)) << "copy on node " << copy;
  }
  EXPECT_THAT(triples(t.wire.last_to(0).counts), ElementsAre(count_triple{1, 0, 1}));
  EXPECT_THAT(t.wire.last_to(1).counts, IsEmpty());
  EXPECT_THAT(triples(t.wire.last_to(2).counts), ElementsAre(count_triple{1, 2, 1}));
}

TEST(Siu, NextRoundTokensWaitForSendOwedTokens) {
  siu_under_test t(single_tm());
  ASSERT_EQ(t.unit.stamp(2), 2u);
  ASSERT_TRUE(t.advance(kNextRound));
  EXPECT_EQ(t.unit.pulse(), 2u);
  EXPECT_TRUE(t.unit.owes_tokens());
  EXPECT_EQ(t.wire.total_sent(), 0u);
  bool did_work = false;
  ASSERT_TRUE(t.unit.send_owed_tokens(did_work).ok());
  EXPECT_TRUE(did_work);
  EXPECT_FALSE(t.unit.owes_tokens());
  EXPECT_THAT(t.tokens_to(), ElementsAre(2u));
  did_work = false;
  ASSERT_TRUE(t.unit.send_owed_tokens(did_work).ok());
  EXPECT_FALSE(did_work);
  EXPECT_EQ(t.wire.total_sent(), 1u);
}

TEST(Siu, ClosesAPulseOnlyOnceEverySendersCountedPacketsArrived) {
  siu_under_test t(single_tm());
  t.feed(0, tm_token(0, 3, 0,
                     {{.source = 0, .destination = 1, .count = 2},
                      {.source = 2, .destination = 1, .count = 1}}));
  EXPECT_EQ(t.unit.closed(), 0u);
  t.feed(0, iso_data(2));
  t.feed(0, iso_data(2));
  EXPECT_EQ(t.unit.closed(), 0u);
  // Three packets have arrived and three are counted, but node 2's is not among them: a
  // total would let node 0's extra packet hide it.
  t.feed(0, iso_data(3));
  EXPECT_EQ(t.unit.closed(), 0u);
  t.feed(2, iso_data(2));
  EXPECT_EQ(t.unit.closed(), 2u);
  // Node 0's third packet is already in when the token that counts it comes.
  t.feed(0, tm_token(0, 5, 0, {{.source = 0, .destination = 1, .count = 3}}));
  EXPECT_EQ(t.unit.closed(), 4u);
}

TEST(Siu, TokensApplyInOrderWhateverOrderThePacketsCome) {
  siu_under_test t(single_tm());
  t.feed(0, tm_token(0, 3, 0, {{.source = 0, .destination = 1, .count = 1}}));
  t.feed(0, tm_token(0, 5, 0, {{.source = 2, .destination = 1, .count = 2}}));
  t.feed(2, iso_data(4));  // one of token 5's packets first: token 3 still waits for node 0's
  EXPECT_EQ(t.unit.closed(), 0u);
  t.feed(0, iso_data(2));
  EXPECT_EQ(t.unit.closed(), 2u);  // token 5 still waits for node 2's second packet
  t.feed(2, iso_data(4));
  EXPECT_EQ(t.unit.closed(), 4u);
  // A token without counts closes at once.
  t.feed(0, tm_token(0, 6, 0, {}));
  EXPECT_EQ(t.unit.closed(), 5u);
}

TEST(Siu, IsoDataForAClosedPulseIsFailedPrecondition) {
  siu_under_test t(single_tm());
  t.feed(0, tm_token(0, 3, 0, {}));
  ASSERT_EQ(t.unit.closed(), 2u);
  for (std::uint64_t stamp : {2u, 1u}) {
    const absl::Status s = t.wire.feed(t.unit, 2, iso_data(stamp));
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr(absl::StrFormat("node 2 stamped %u", stamp)));
    EXPECT_THAT(std::string(s.message()), HasSubstr("pulse 2 closed at node 1"));
  }
  t.feed(2, iso_data(3));
  // The refused packets were not counted: node 2 has sent two packets, one has arrived.
  t.feed(0, tm_token(0, 5, 0, {{.source = 2, .destination = 1, .count = 2}}));
  EXPECT_EQ(t.unit.closed(), 2u);
  t.feed(2, iso_data(4));
  EXPECT_EQ(t.unit.closed(), 4u);
}

TEST(Siu, SendsNothingWithoutDemand) {
  siu_under_test t(single_tm());
  for (int round = 0; round < 200; ++round) {
    EXPECT_FALSE(t.advance(round % 2 == 0 ? kNow : kNextRound));
    bool did_work = false;
    ASSERT_TRUE(t.unit.send_owed_tokens(did_work).ok());
    EXPECT_FALSE(did_work);
  }
  EXPECT_EQ(t.wire.total_sent(), 0u);
  EXPECT_EQ(t.unit.pulse(), 0u);
  EXPECT_TRUE(t.unit.may_stamp());
}

TEST(Siu, HostDemandMovesTimeAsFarAsItsTmNeeds) {
  siu_under_test t(single_tm());
  t.unit.on_host_demand(7);
  EXPECT_EQ(t.unit.want(), 7u);
  ASSERT_TRUE(t.advance());
  t.feed(0, tm_token(0, 2, 7, {}));
  ASSERT_TRUE(t.advance());
  t.feed(0, tm_token(0, 4, 7, {}));
  ASSERT_TRUE(t.advance());
  t.feed(0, tm_token(0, 5, 7, {}));
  EXPECT_FALSE(t.advance());
  // The TM sends token 7 once every SIU has sent 7 - K = 5: no further token is needed.
  EXPECT_THAT(t.tokens_to(), ElementsAre(2u, 4u, 5u));
  for (const wire_packet& p : t.wire.sent_to(0)) {
    EXPECT_EQ(p.header.type, packet_type::siu_token);  // each token carries the want
    EXPECT_EQ(p.body.want, 7u);
  }
}

TEST(Siu, HostDemandGoesOutAsADemandWhenNoTokenCan) {
  siu_under_test t(single_tm());
  t.unit.on_host_demand(20);
  ASSERT_TRUE(t.advance());
  t.unit.on_host_demand(30);  // the window is full: no token can carry it
  ASSERT_TRUE(t.advance());
  EXPECT_FALSE(t.advance());  // said once
  const std::vector<wire_packet> sent = t.wire.sent_to(0);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].header.type, packet_type::siu_token);
  EXPECT_EQ(sent[0].body.want, 20u);
  EXPECT_EQ(sent[1].header.type, packet_type::demand);
  EXPECT_EQ(sent[1].header.stamp, 30u);
  EXPECT_EQ(sent[1].header.to_switch, 0u);
  EXPECT_EQ(sent[1].header.a, kNoSwitch);  // from an SIU
}

TEST(Siu, DemandFromItsTmIsNeverEchoed) {
  siu_under_test t(single_tm());
  t.feed(0, scripted::demand_to_siu(0, 20));
  ASSERT_TRUE(t.advance());
  t.feed(0, scripted::demand_to_siu(0, 30));
  EXPECT_FALSE(t.advance());  // window full, and the TM knows already
  EXPECT_EQ(t.unit.want(), 30u);
  t.feed(0, tm_token(0, 2, 30, {}));
  ASSERT_TRUE(t.advance());
  EXPECT_THAT(t.wire.stamps_to(0, packet_type::demand), IsEmpty());
  EXPECT_THAT(t.tokens_to(), ElementsAre(2u, 4u));
  EXPECT_EQ(t.wire.last_to(0).body.want, 30u);
}

TEST(Siu, IdleSiuParksBehindItsOwedTokens) {
  siu_under_test t(single_tm());
  ASSERT_EQ(t.unit.stamp(2), 2u);
  t.unit.count_sent(2);
  ASSERT_TRUE(t.advance(kNextRound));  // token 2 is owed
  t.idle_until_parked();
  const std::vector<wire_packet> sent = t.wire.sent_to(0);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].header.type, packet_type::siu_token);
  EXPECT_EQ(sent[0].header.stamp, 2u);
  EXPECT_THAT(triples(sent[0].counts), ElementsAre(count_triple{1, 2, 1}));
  EXPECT_EQ(sent[1].header.type, packet_type::park);
  EXPECT_EQ(sent[1].header.stamp, 2u);  // its last token: no new one
  EXPECT_EQ(sent[1].header.a, 1u);
  EXPECT_THAT(sent[1].counts, IsEmpty());  // the token before it counted everything
  // Parked, it sends no token whatever its TM sends.
  t.feed(0, tm_token(0, 2, 9, {}));
  t.feed(0, tm_token(0, 4, 9, {}));
  EXPECT_FALSE(t.advance());
  EXPECT_EQ(t.wire.total_sent(), 2u);
}

TEST(Siu, RestParksAnIdleSiuAtOnceButNotABusyOne) {
  siu_under_test t(single_tm());
  ASSERT_EQ(t.unit.stamp(2), 2u);
  ASSERT_TRUE(t.advance());  // a round with work
  bool did_work = false;
  ASSERT_TRUE(t.unit.rest(did_work).ok());
  EXPECT_FALSE(did_work);
  EXPECT_TRUE(t.unit.may_stamp());
  EXPECT_FALSE(t.advance());  // a round without
  ASSERT_TRUE(t.unit.rest(did_work).ok());
  EXPECT_TRUE(did_work);
  EXPECT_FALSE(t.unit.may_stamp());
  EXPECT_THAT(t.wire.stamps_to(0, packet_type::park), ElementsAre(2u));
}

TEST(Siu, UnparkWaitsForItsTmsAnswerAndResumesFromIt) {
  siu_under_test t(single_tm());
  t.idle_until_parked();
  t.wire.forget();
  ASSERT_TRUE(t.unit.request_unpark().ok());
  ASSERT_TRUE(t.unit.request_unpark().ok());  // asked once
  EXPECT_FALSE(t.unit.may_stamp());
  const std::vector<wire_packet> sent = t.wire.sent_to(0);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].header.type, packet_type::unpark);
  EXPECT_EQ(sent[0].header.to_switch, 0u);
  EXPECT_EQ(sent[0].header.a, 1u);
  t.feed(0, unparked(0, 9));
  ASSERT_TRUE(t.unit.may_stamp());
  EXPECT_EQ(t.unit.pulse(), 9u);
  // Others may have passed pulse 9 without it: it stamps from there, and the window opens
  // from there although its last TM token is older.
  EXPECT_EQ(t.unit.stamp(2), 11u);
  ASSERT_TRUE(t.advance());
  EXPECT_THAT(t.tokens_to(), ElementsAre(11u));
}

// The stamp base bounds every stamp to come from below (a same-host read relies on it). A
// parked SIU's pulse stands still while its TM's tokens go on: its base follows them, since
// the TM resumes it from its last token; while the unpark is in flight a token may be newer
// than the answer, so the base falls back to the pulse until the answer comes.
TEST(Siu, AParkedSiusStampBaseFollowsItsTmsTokens) {
  siu_under_test t(single_tm());
  EXPECT_EQ(t.unit.stamp_base(), 0u);
  t.idle_until_parked();
  EXPECT_EQ(t.unit.stamp_base(), t.unit.pulse());
  t.feed(0, tm_token(0, 4, 0, {}));
  t.feed(0, tm_token(0, 6, 0, {}));
  EXPECT_EQ(t.unit.pulse(), 0u);
  EXPECT_EQ(t.unit.stamp_base(), 6u);
  ASSERT_TRUE(t.unit.request_unpark().ok());
  t.feed(0, tm_token(0, 7, 0, {}));
  EXPECT_EQ(t.unit.stamp_base(), 0u);  // unparking: the answer may be 6
  t.feed(0, unparked(0, 6));
  ASSERT_TRUE(t.unit.may_stamp());
  EXPECT_EQ(t.unit.stamp_base(), 6u);
  EXPECT_EQ(t.unit.stamp(1), 7u);
}

TEST(Siu, UnparkWithAReplicatedTmWaitsForEveryCopy) {
  siu_under_test t(topology::single_switch(3));
  t.idle_until_parked();
  for (comm::node_id copy : {0u, 1u, 2u}) {
    EXPECT_THAT(t.wire.stamps_to(copy, packet_type::park), ElementsAre(0u));
  }
  ASSERT_TRUE(t.unit.request_unpark().ok());
  for (comm::node_id copy : {0u, 1u, 2u}) {
    EXPECT_THAT(t.wire.stamps_to(copy, packet_type::unpark), ElementsAre(0u));
  }
  t.feed(0, unparked(0, 5));
  EXPECT_FALSE(t.unit.may_stamp());
  t.feed(2, unparked(0, 8));
  EXPECT_FALSE(t.unit.may_stamp());
  t.feed(1, unparked(0, 3));
  ASSERT_TRUE(t.unit.may_stamp());
  EXPECT_EQ(t.unit.pulse(), 8u);  // above every copy's answer
  EXPECT_EQ(t.unit.stamp(2), 10u);
}

TEST(Siu, ItsOwnNodesTmCopyIsCalledNotSentTo) {
  const topology topo = topology::single_switch(2);
  scripted_wire wire(topo, 0);
  siu unit(0, topo, wire.out);
  token_manager local(0, 0, topo, wire.out);
  local.attach_local_siu(unit);
  unit.attach_local_tm(local);
  ASSERT_EQ(unit.stamp(2), 2u);
  unit.count_sent(1);
  bool did_work = false;
  ASSERT_TRUE(unit.advance(did_work, kNextRound).ok());
  EXPECT_TRUE(unit.owes_tokens());
  EXPECT_EQ(wire.total_sent(), 0u);
  ASSERT_TRUE(unit.send_owed_tokens(did_work).ok());
  EXPECT_THAT(wire.stamps_to(1, packet_type::siu_token), ElementsAre(2u));
  EXPECT_THAT(triples(wire.last_to(1).counts), ElementsAre(count_triple{0, 1, 1}));
  // The local copy had token 2 by a call; its answer comes back the same way and closes
  // pulse 1 here, without a packet to this node.
  ASSERT_TRUE(local.advance(did_work).ok());
  EXPECT_EQ(local.pulse(), 2u);
  EXPECT_EQ(unit.closed(), 1u);
  EXPECT_THAT(wire.sent_to(0), IsEmpty());
}

}  // namespace
}  // namespace iso::nicfw
