// The credit ledger: a host may send while its bytes in flight (payload plus the packet
// overhead) fit the window, or anything when nothing is in flight; grants are cumulative
// and never go back; the NIC reports frees once, sends an explicit credit packet when a
// quarter of the window is unreported or the peer asked, and asks for credits once per
// wait. Peers and classes are independent.
#include "nicfw/credit_ledger.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace iso::nicfw {
namespace {

constexpr credit_class kIso = credit_class::isotach;
constexpr credit_class kDirect = credit_class::direct;

credit_info freed(std::uint64_t isotach, std::uint64_t direct) {
  credit_info info;
  info.freed = {isotach, direct};
  return info;
}

TEST(CreditLedger, KeepsItsShape) {
  const credit_ledger ledger(3, 1, 4096);
  EXPECT_EQ(ledger.nodes(), 3u);
  EXPECT_EQ(ledger.window(), 4096u);
  EXPECT_EQ(ledger.in_flight(0, kIso), 0u);
  EXPECT_EQ(ledger.buffered(2, kDirect), 0u);
}

TEST(CreditLedger, SendsWhileBytesInFlightFitTheWindow) {
  credit_ledger ledger(2, 0, 1000);
  ASSERT_TRUE(ledger.host_may_send(1, kIso, 100));
  ledger.host_consume(1, kIso, 100);
  EXPECT_EQ(ledger.in_flight(1, kIso), 100 + kPacketOverhead);
  // 164 in flight: a packet of 772 bytes fills the window exactly, one more byte does not.
  EXPECT_TRUE(ledger.host_may_send(1, kIso, 1000 - 164 - kPacketOverhead));
  EXPECT_FALSE(ledger.host_may_send(1, kIso, 1000 - 164 - kPacketOverhead + 1));
}

TEST(CreditLedger, PacketLargerThanTheWindowGoesWhenNothingIsInFlight) {
  credit_ledger ledger(2, 0, 1000);
  EXPECT_TRUE(ledger.host_may_send(1, kIso, 50000));
  ledger.host_consume(1, kIso, 50000);
  EXPECT_EQ(ledger.in_flight(1, kIso), 50000 + kPacketOverhead);
  EXPECT_FALSE(ledger.host_may_send(1, kIso, 0));
  ledger.nic_grant(1, freed(50000 + kPacketOverhead, 0));
  EXPECT_EQ(ledger.in_flight(1, kIso), 0u);
  EXPECT_TRUE(ledger.host_may_send(1, kIso, 50000));
}

TEST(CreditLedger, EmptyPacketsCostTheOverhead) {
  credit_ledger ledger(2, 0, 3 * kPacketOverhead);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(ledger.host_may_send(1, kIso, 0)) << "packet " << i;
    ledger.host_consume(1, kIso, 0);
  }
  EXPECT_FALSE(ledger.host_may_send(1, kIso, 0));
}

TEST(CreditLedger, PeersAndClassesAreIndependent) {
  credit_ledger ledger(3, 0, 1000);
  ledger.host_consume(1, kIso, 900);
  EXPECT_FALSE(ledger.host_may_send(1, kIso, 100));
  EXPECT_TRUE(ledger.host_may_send(1, kDirect, 900));
  EXPECT_TRUE(ledger.host_may_send(2, kIso, 900));
  EXPECT_EQ(ledger.in_flight(1, kDirect), 0u);
  EXPECT_EQ(ledger.in_flight(2, kIso), 0u);
  ledger.nic_grant(2, freed(500, 500));  // another peer's credit frees nothing here
  EXPECT_EQ(ledger.in_flight(1, kIso), 900 + kPacketOverhead);
}

TEST(CreditLedger, GrantsAreCumulativeAndNeverGoBack) {
  credit_ledger ledger(2, 0, 1000);
  ledger.host_consume(1, kIso, 300);
  ledger.host_consume(1, kIso, 300);
  ledger.nic_grant(1, freed(364, 0));
  EXPECT_EQ(ledger.in_flight(1, kIso), 364u);
  // A stale report (an older freed count, overtaken by a newer one) changes nothing.
  ledger.nic_grant(1, freed(100, 0));
  EXPECT_EQ(ledger.in_flight(1, kIso), 364u);
  ledger.nic_grant(1, freed(728, 0));
  EXPECT_EQ(ledger.in_flight(1, kIso), 0u);
}

TEST(CreditLedger, ReceiverCountsBufferedBytesAndTheirPeak) {
  credit_ledger ledger(2, 1, 1000);
  ledger.host_received(0, kIso, 100);
  ledger.host_received(0, kIso, 36);
  EXPECT_EQ(ledger.buffered(0, kIso), 136 + 2 * kPacketOverhead);
  // Frees are raw: a packet may be freed in steps, overhead included.
  ledger.host_free(0, kIso, 100);
  ledger.host_free(0, kIso, kPacketOverhead);
  EXPECT_EQ(ledger.buffered(0, kIso), 36 + kPacketOverhead);
  ledger.host_received(0, kIso, 0);
  EXPECT_EQ(ledger.peak_buffered(0, kIso), 136 + 2 * kPacketOverhead);
  EXPECT_EQ(ledger.buffered(0, kDirect), 0u);
  EXPECT_EQ(ledger.peak_buffered(0, kDirect), 0u);
}

TEST(CreditLedger, ReportCarriesTheFreedCountsOnceAndMarksThemReported) {
  credit_ledger ledger(2, 1, 1000);
  ledger.host_received(0, kIso, 500);
  ledger.host_free(0, kIso, 200);
  ledger.host_received(0, kDirect, 20);
  ledger.host_free(0, kDirect, 84);
  const credit_info info = ledger.nic_report(0);
  EXPECT_EQ(info.freed[0], 200u);
  EXPECT_EQ(info.freed[1], 84u);
  EXPECT_FALSE(ledger.nic_credit_due(0));
  // Cumulative: the next report carries the total, not the difference.
  ledger.host_free(0, kIso, 10);
  EXPECT_EQ(ledger.nic_report(0).freed[0], 210u);
}

TEST(CreditLedger, CreditPacketIsDueAtAQuarterOfTheWindowUnreported) {
  credit_ledger ledger(2, 1, 1000);
  ledger.host_received(0, kDirect, 1000);
  ledger.host_free(0, kDirect, 249);
  EXPECT_FALSE(ledger.nic_credit_due(0));
  ledger.host_free(0, kDirect, 1);
  EXPECT_TRUE(ledger.nic_credit_due(0));
  (void)ledger.nic_report(0);
  EXPECT_FALSE(ledger.nic_credit_due(0));
  EXPECT_FALSE(ledger.nic_credit_due(1));
}

TEST(CreditLedger, PeerThatAskedGetsCreditAsSoonAsAnythingIsFreed) {
  credit_ledger ledger(2, 1, 1000);
  ledger.host_received(0, kIso, 100);
  ledger.nic_on_request(0);
  // Nothing freed yet: nothing to send.
  EXPECT_FALSE(ledger.nic_credit_due(0));
  ledger.host_free(0, kIso, 1);
  EXPECT_TRUE(ledger.nic_credit_due(0));
  // The report answers the request.
  (void)ledger.nic_report(0);
  ledger.host_free(0, kIso, 1);
  EXPECT_FALSE(ledger.nic_credit_due(0));
}

TEST(CreditLedger, DirtyFlagsHostSideChangesOnce) {
  credit_ledger ledger(2, 0, 1000);
  EXPECT_FALSE(ledger.nic_take_dirty());
  ledger.host_received(1, kIso, 10);
  EXPECT_FALSE(ledger.nic_take_dirty());
  ledger.host_free(1, kIso, 10);
  EXPECT_TRUE(ledger.nic_take_dirty());
  EXPECT_FALSE(ledger.nic_take_dirty());
  ledger.nic_on_request(1);
  EXPECT_TRUE(ledger.nic_take_dirty());
  ledger.host_consume(1, kIso, 900);
  EXPECT_FALSE(ledger.nic_take_dirty());
  ledger.host_want(1, kIso, 500);
  EXPECT_TRUE(ledger.nic_take_dirty());
  EXPECT_FALSE(ledger.nic_take_dirty());
}

TEST(CreditLedger, WaitingHostAsksOnceUntilAnswered) {
  credit_ledger ledger(2, 0, 1000);
  ledger.host_consume(1, kIso, 900);  // 964 in flight
  EXPECT_FALSE(ledger.nic_take_request_due(1));
  ASSERT_FALSE(ledger.host_may_send(1, kIso, 200));
  ledger.host_want(1, kIso, 200);
  EXPECT_TRUE(ledger.nic_take_request_due(1));
  EXPECT_FALSE(ledger.nic_take_request_due(1));  // already asked
  EXPECT_FALSE(ledger.nic_take_request_due(0));
  // Wanting the same again does not make the NIC look again.
  (void)ledger.nic_take_dirty();
  ledger.host_want(1, kIso, 200);
  EXPECT_FALSE(ledger.nic_take_dirty());
  // A grant too small for the packet: the host still waits, so the NIC asks again.
  ledger.nic_grant(1, freed(100, 0));
  EXPECT_TRUE(ledger.nic_take_dirty());
  EXPECT_TRUE(ledger.nic_take_request_due(1));
  // Enough: 964 - 228 = 736 in flight, and 736 + 200 + 64 fits exactly.
  ledger.nic_grant(1, freed(228, 0));
  EXPECT_FALSE(ledger.nic_take_dirty());
  EXPECT_FALSE(ledger.nic_take_request_due(1));
  EXPECT_TRUE(ledger.host_may_send(1, kIso, 200));
}

TEST(CreditLedger, HostWaitingForAnOversizePacketWantsEverythingBack) {
  credit_ledger ledger(2, 0, 1000);
  ledger.host_consume(1, kDirect, 100);
  ledger.host_want(1, kDirect, 5000);
  EXPECT_TRUE(ledger.nic_take_request_due(1));
  ledger.nic_grant(1, freed(0, 100));
  EXPECT_TRUE(ledger.nic_take_dirty());  // 64 bytes still out: still waiting
  EXPECT_TRUE(ledger.nic_take_request_due(1));
  ledger.nic_grant(1, freed(0, 100 + kPacketOverhead));
  EXPECT_FALSE(ledger.nic_take_request_due(1));
  EXPECT_TRUE(ledger.host_may_send(1, kDirect, 5000));
}

}  // namespace
}  // namespace iso::nicfw
