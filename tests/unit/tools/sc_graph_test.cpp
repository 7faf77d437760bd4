// The graph checker (tools/sc/sc_graph.hpp) on hand-made histories: one per kind of cycle
// (each prints the cycle it found), the histories SC allows for the same programs, and the
// histories it must refuse to judge. Real histories are checked by litmus_test.
#include "tools/sc/sc_graph.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

constexpr std::uint64_t kX = 100;
constexpr std::uint64_t kY = 200;

std::string name(std::uint64_t address) {
  if (address == kX) return "x";
  if (address == kY) return "y";
  return "@" + std::to_string(address);
}

// One executed operation: at `node`, from isochron `rank` of `issuer`.
iso::trace_event op(std::uint32_t node, std::uint32_t issuer, std::uint64_t rank,
                    iso::trace_op kind, std::uint64_t address, std::uint64_t value) {
  return {.pid = issuer,
          .rank = rank,
          .op = kind,
          .address = address,
          .value = value,
          .node = node,
          .issuer = issuer,
          .issue_rank = rank};
}
iso::trace_event w(std::uint32_t node, std::uint32_t issuer, std::uint64_t rank,
                   std::uint64_t address, std::uint64_t value) {
  return op(node, issuer, rank, iso::trace_op::write, address, value);
}
iso::trace_event r(std::uint32_t node, std::uint32_t issuer, std::uint64_t rank,
                   std::uint64_t address, std::uint64_t value) {
  return op(node, issuer, rank, iso::trace_op::read, address, value);
}

iso::sc::graph_report check(const std::vector<iso::trace_event>& events) {
  iso::sc::graph_report report = iso::sc::check_graph(events, {.name = name, .initial = {}});
  std::printf("%s\n", report.consistent ? "consistent" : report.explanation.c_str());
  return report;
}

bool cycle_uses(const iso::sc::graph_report& report, iso::sc::relation kind) {
  for (const auto& e : report.cycle) {
    if (e.kind == kind) return true;
  }
  return false;
}

// SB: P0 writes x and reads y, P1 writes y and reads x; each node holds one copy of both.
std::vector<iso::trace_event> store_buffering(std::uint64_t r0, std::uint64_t r1) {
  return {w(0, 0, 0, kX, 1), r(0, 0, 1, kY, r0), w(0, 1, 0, kY, 1),
          w(1, 1, 0, kY, 1), r(1, 1, 1, kX, r1), w(1, 0, 0, kX, 1)};
}

TEST(ScGraph, StoreBufferingBothZeroIsAPoFrCycle) {
  const auto report = check(store_buffering(0, 0));
  EXPECT_FALSE(report.consistent);
  EXPECT_TRUE(report.checkable);
  ASSERT_EQ(report.cycle.size(), 4u);
  EXPECT_TRUE(cycle_uses(report, iso::sc::relation::po));
  EXPECT_TRUE(cycle_uses(report, iso::sc::relation::fr));
  EXPECT_NE(report.explanation.find("-fr-> N0#0 [W x=1]"), std::string::npos) << report.explanation;
  EXPECT_EQ(report.reads, 2u);
  EXPECT_EQ(report.writes, 2u);
}

TEST(ScGraph, StoreBufferingOutcomesThatScAllowsPass) {
  EXPECT_TRUE(check(store_buffering(1, 0)).consistent);
  EXPECT_TRUE(check(store_buffering(0, 1)).consistent);
  EXPECT_TRUE(check(store_buffering(1, 1)).consistent);
}

TEST(ScGraph, MessagePassingStaleDataIsAPoRfFrCycle) {
  // P0: W x=1; W y=1.  P1: R y=1; R x=0.
  const auto report =
      check({w(0, 0, 0, kX, 1), w(0, 0, 1, kY, 1), r(0, 1, 0, kY, 1), r(0, 1, 1, kX, 0)});
  EXPECT_FALSE(report.consistent);
  EXPECT_TRUE(cycle_uses(report, iso::sc::relation::po));
  EXPECT_TRUE(cycle_uses(report, iso::sc::relation::rf));
  EXPECT_TRUE(cycle_uses(report, iso::sc::relation::fr));
}

TEST(ScGraph, LoadBufferingIsAPoRfCycle) {
  // P0: R x=1; W y=1.  P1: R y=1; W x=1.
  const auto report =
      check({r(0, 0, 0, kX, 1), w(0, 0, 1, kY, 1), r(0, 1, 0, kY, 1), w(0, 1, 1, kX, 1)});
  EXPECT_FALSE(report.consistent);
  for (const auto& e : report.cycle) {
    EXPECT_TRUE(e.kind == iso::sc::relation::po || e.kind == iso::sc::relation::rf);
  }
  EXPECT_EQ(report.cycle.size(), 4u);
}

TEST(ScGraph, TwoPlusTwoWritesIsAPoCoCycle) {
  // P0: W x=1; W y=2.  P1: W y=1; W x=2.  The copy of x ends with 1, the copy of y with 2.
  const auto report =
      check({w(0, 1, 1, kX, 2), w(0, 0, 0, kX, 1), w(1, 0, 1, kY, 2), w(1, 1, 0, kY, 1)});
  EXPECT_FALSE(report.consistent);
  for (const auto& e : report.cycle) {
    EXPECT_TRUE(e.kind == iso::sc::relation::po || e.kind == iso::sc::relation::co)
        << report.explanation;
  }
  EXPECT_TRUE(check({w(0, 0, 0, kX, 1), w(0, 1, 1, kX, 2), w(1, 1, 0, kY, 1), w(1, 0, 1, kY, 2)})
                  .consistent);
}

TEST(ScGraph, CopiesThatApplyWritesInDifferentOrdersAreACoCycle) {
  const auto report =
      check({w(0, 0, 0, kX, 1), w(0, 1, 0, kX, 2), w(1, 1, 0, kX, 2), w(1, 0, 0, kX, 1)});
  EXPECT_FALSE(report.consistent);
  ASSERT_EQ(report.cycle.size(), 2u);
  EXPECT_EQ(report.cycle[0].kind, iso::sc::relation::co);
  EXPECT_EQ(report.cycle[1].kind, iso::sc::relation::co);
}

TEST(ScGraph, CoherenceOfReadReadIsAnRfPoFrCycle) {
  // CoRR: P0: W x=1.  P1: R x=1; R x=0 (sees the write, then no longer sees it).
  const auto report = check({w(0, 0, 0, kX, 1), r(0, 1, 0, kX, 1), r(0, 1, 1, kX, 0)});
  EXPECT_FALSE(report.consistent);
  EXPECT_TRUE(cycle_uses(report, iso::sc::relation::rf));
  EXPECT_TRUE(cycle_uses(report, iso::sc::relation::po));
  EXPECT_TRUE(cycle_uses(report, iso::sc::relation::fr));
  EXPECT_TRUE(check({w(0, 0, 0, kX, 1), r(0, 1, 0, kX, 0), r(0, 1, 1, kX, 1)}).consistent);
}

TEST(ScGraph, AccessesOfOneIsochronAreAtomic) {
  // P0's isochron reads x and writes y at once; P1's reads y and writes x. Both reading 0
  // is fine (either ran first); a cycle needs two isochrons of one issuer.
  EXPECT_TRUE(check({r(0, 0, 0, kX, 0), w(0, 0, 0, kY, 1), r(0, 1, 0, kY, 1), w(0, 1, 0, kX, 1)})
                  .consistent);
  // The same as SB with each node's two accesses in one isochron: both 0 is impossible.
  const auto report =
      check({w(0, 0, 0, kX, 1), r(0, 0, 0, kY, 0), w(0, 1, 0, kY, 1), r(0, 1, 0, kX, 0)});
  EXPECT_FALSE(report.consistent);
  ASSERT_EQ(report.cycle.size(), 2u);
  EXPECT_EQ(report.cycle[0].kind, iso::sc::relation::fr);
}

TEST(ScGraph, AnIsochronWritingALocationTwiceHoldsOnePlaceInCoherence) {
  // P0: one isochron writes x=1 then x=2; P1 reads 2, then (later) the same again.
  EXPECT_TRUE(check({w(0, 0, 0, kX, 1), w(0, 0, 0, kX, 2), r(0, 1, 0, kX, 2), r(0, 1, 1, kX, 2)})
                  .consistent);
}

TEST(ScGraph, ASchedHoldsItsPlaceForTheAssign) {
  // Node 0: P0 scheds x (pulse 1), P1 writes x=5 (pulse 2), P0 assigns x=7 into the
  // sched's place: co is 7 then 5, so a read of 5 followed by a read of 7 is stale.
  const std::vector<iso::trace_event> base = {op(0, 0, 0, iso::trace_op::sched, kX, 0),
                                              w(0, 1, 0, kX, 5),
                                              op(0, 0, 1, iso::trace_op::assign, kX, 7)};
  auto ok = base;
  ok.push_back(r(0, 2, 0, kX, 7));
  ok.push_back(r(0, 2, 1, kX, 5));
  EXPECT_TRUE(check(ok).consistent);
  auto bad = base;
  bad.push_back(r(0, 2, 0, kX, 5));
  bad.push_back(r(0, 2, 1, kX, 7));
  EXPECT_FALSE(check(bad).consistent);
}

TEST(ScGraph, ReadOfAValueNeverWrittenIsOutOfThinAir) {
  const auto report = check({w(0, 0, 0, kX, 1), r(0, 1, 0, kX, 42)});
  EXPECT_FALSE(report.consistent);
  EXPECT_TRUE(report.checkable);
  EXPECT_NE(report.explanation.find("returned 42"), std::string::npos) << report.explanation;
}

TEST(ScGraph, RepeatedValuesCannotBeJudged) {
  auto report = check({w(0, 0, 0, kX, 1), w(0, 1, 0, kX, 1), r(0, 2, 0, kX, 1)});
  EXPECT_FALSE(report.checkable);
  EXPECT_NE(report.explanation.find("unique"), std::string::npos) << report.explanation;
  report = check({w(0, 0, 0, kX, 0), r(0, 1, 0, kX, 0)});
  EXPECT_FALSE(report.checkable);
  EXPECT_NE(report.explanation.find("initial value"), std::string::npos) << report.explanation;
}

TEST(ScGraph, InitialValuesAndReadModifyWrites) {
  // x starts at 10; P0 fetch_adds 1 (reads 10, stores 11); P1 reads 11.
  iso::trace_event add = op(0, 0, 0, iso::trace_op::fetch_add, kX, 10);
  add.stored = 11;
  auto report =
      iso::sc::check_graph({add, r(0, 1, 0, kX, 11)}, {.name = {}, .initial = {{kX, 10}}});
  EXPECT_TRUE(report.consistent) << report.explanation;
  EXPECT_EQ(report.reads, 2u);
  EXPECT_EQ(report.writes, 1u);
  // A second fetch_add that also read 10 lost an update: fr and rf meet in a cycle.
  iso::trace_event again = op(0, 1, 0, iso::trace_op::fetch_add, kX, 10);
  again.stored = 12;
  report = iso::sc::check_graph({add, again}, {.name = {}, .initial = {{kX, 10}}});
  EXPECT_FALSE(report.consistent);
}

}  // namespace
