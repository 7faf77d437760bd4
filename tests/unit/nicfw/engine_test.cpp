// The emulated NIC against the inproc transport with a fake host: every node's engine is
// polled (inline) or runs its own thread, hosts submit isochrons, and the test checks what
// the isotach contract promises the host:
//  - every isotach packet stamped p is delivered before EOP(p), and EOP(p) counts them all;
//  - each host gets a marker for every isochron (a run stamped alike shares one), stamps
//    non-decreasing in issue order, and the marker precedes its pulse's EOP;
//  - every part of an isochron carries the same stamp at every destination;
//  - per sender, packets arrive in issue order.
#include "nicfw/engine.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <cstring>
#include <map>
#include <random>
#include <thread>

#include "absl/strings/str_format.h"
#include "comm/inproc.hpp"
#include "tests/support/test_support.hpp"

namespace iso::nicfw {
namespace {

struct fake_host {
  comm::node_id id = 0;
  std::uint32_t next_sequence = 0;
  std::vector<std::uint64_t> marker_stamps;  // by sequence
  std::uint64_t marker_deliveries = 0;
  std::uint64_t closing_data = 0;  // isotach payloads delivered with their pulse's EOP
  std::map<std::uint64_t, std::uint32_t> items;  // pulse -> items seen before its EOP
  std::uint64_t last_eop = 0;
  std::vector<std::uint32_t> next_from;  // per sender: next isochron sequence
  std::map<std::pair<comm::node_id, std::uint32_t>, std::uint64_t> stamp_seen;  // (src, seq)
  std::vector<std::string> problems;
  std::uint64_t packets = 0;

  void on_delivery(const delivery& d) {
    switch (d.kind) {
      case delivery_kind::closing_data:
        on_delivery({.kind = delivery_kind::iso_data,
                     .source = d.source,
                     .sequence = d.sequence,
                     .stamp = d.stamp,
                     .payload = d.payload});
        on_delivery({.kind = delivery_kind::eop, .count = d.count, .stamp = d.stamp});
        ++closing_data;
        break;
      case delivery_kind::iso_data: {
        std::uint32_t seq;
        std::memcpy(&seq, d.payload.data(), sizeof(seq));
        if (d.stamp <= last_eop) problems.push_back("data after its EOP");
        if (seq < next_from[d.source]) problems.push_back("sender order broken");
        next_from[d.source] = seq + 1;
        stamp_seen[{d.source, seq}] = d.stamp;
        ++items[d.stamp];
        ++packets;
        break;
      }
      case delivery_kind::marker:
        if (d.sequence != marker_stamps.size()) problems.push_back("marker out of order");
        if (d.count == 0) problems.push_back("marker for no isochron");
        if (!marker_stamps.empty() && d.stamp < marker_stamps.back()) {
          problems.push_back("stamps decreased");
        }
        if (d.stamp <= last_eop) problems.push_back("marker after its EOP");
        marker_stamps.insert(marker_stamps.end(), d.count, d.stamp);
        ++marker_deliveries;
        ++items[d.stamp];
        break;
      case delivery_kind::eop:
        if (d.stamp <= last_eop) problems.push_back("EOPs out of order");
        if (items[d.stamp] != d.count) {
          problems.push_back("EOP count " + std::to_string(d.count) + " but saw " +
                             std::to_string(items[d.stamp]));
        }
        items.erase(d.stamp);
        last_eop = d.stamp;
        break;
      case delivery_kind::direct:
        break;
    }
  }
};

// How the cluster's NICs run: each on a thread of its own, or inline in the test's polls.
enum class nic_run { thread, inline_poll };

struct cluster {
  std::shared_ptr<const topology> topo;
  std::vector<std::unique_ptr<engine>> nics;
  std::vector<fake_host> hosts;

  cluster(std::shared_ptr<const topology> t, nic_run how) : topo(std::move(t)) {
    const std::uint32_t n = topo->nodes();
    auto transports = comm::make_inproc_fabric(n, {.ring_capacity = 1 << 16});
    EXPECT_TRUE(transports.ok());
    hosts.resize(n);
    for (comm::node_id i = 0; i < n; ++i) {
      nics.push_back(std::make_unique<engine>(i, topo, std::move((*transports)[i]),
                                              engine_options{.own_thread = how == nic_run::thread,
                                                             .local_nodes = n,
                                                             .local_index = i,
                                                             .host_queue_bytes = 1 << 20}));
      hosts[i].id = i;
      hosts[i].next_from.assign(n, 0);
    }
    for (auto& nic : nics) nic->start();
  }

  // One isochron from `from` to `destinations`; the payload is the isochron's sequence.
  void submit(comm::node_id from, const std::vector<comm::node_id>& destinations) {
    fake_host& h = hosts[from];
    const std::uint32_t seq = h.next_sequence++;
    std::vector<isochron_part> parts;
    std::uint32_t delta = 0;
    for (comm::node_id d : destinations) {
      parts.push_back({d, std::as_bytes(std::span(&seq, 1))});
      delta = std::max(delta, topo->distance(from, d));
    }
    while (!nics[from]->channel().host_submit_isochron(seq, delta, parts)) pump();
    nics[from]->wake();
  }

  void pump() {
    for (comm::node_id i = 0; i < nics.size(); ++i) pump(i);
  }

  void pump(comm::node_id i) {
    if (nics[i]->runs_inline()) {
      bool did = false;
      ASSERT_TRUE(nics[i]->poll(did).ok()) << nics[i]->poll(did);
    }
    nics[i]->channel().host_poll([&](const delivery& d) { hosts[i].on_delivery(d); });
  }

  // Pumps until every host has executed everything it was sent, has its markers (a NIC may
  // deliver one after the receivers already have the isochron), and every marker's EOP.
  void drain(std::uint64_t expected_packets_total) {
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    for (;;) {
      pump();
      std::uint64_t packets = 0;
      bool all_closed = true;
      for (const fake_host& h : hosts) {
        packets += h.packets;
        if (!h.items.empty() || h.marker_stamps.size() != h.next_sequence) all_closed = false;
      }
      if (packets == expected_packets_total && all_closed) return;
      ASSERT_LT(absl::Now(), deadline)
          << "pulses never closed: " << packets << " of " << expected_packets_total << " packets";
      if (!nics[0]->runs_inline()) std::this_thread::yield();
    }
  }

  void expect_consistent() {
    for (const fake_host& h : hosts) {
      EXPECT_TRUE(h.problems.empty()) << "node " << h.id << ": " << h.problems.front();
    }
    // Every destination saw each isochron at the stamp its sender's marker announced.
    for (const fake_host& receiver : hosts) {
      for (const auto& [key, stamp] : receiver.stamp_seen) {
        EXPECT_EQ(stamp, hosts[key.first].marker_stamps.at(key.second))
            << "isochron " << key.second << " of node " << key.first << " at node " << receiver.id;
      }
    }
  }
};

void random_workload(cluster& c, int isochrons_per_node, std::uint32_t seed) {
  std::mt19937 rng(seed);
  const std::uint32_t n = c.topo->nodes();
  std::uint64_t expected = 0;
  for (int round = 0; round < isochrons_per_node; ++round) {
    for (comm::node_id from = 0; from < n; ++from) {
      std::vector<comm::node_id> destinations;
      for (comm::node_id d = 0; d < n; ++d) {
        if (d != from && rng() % 2) destinations.push_back(d);
      }
      if (destinations.empty()) destinations.push_back((from + 1) % n);
      expected += destinations.size();
      c.submit(from, destinations);
      if (rng() % 4 == 0) c.pump();
    }
  }
  c.drain(expected);
  c.expect_consistent();
  for (const fake_host& h : c.hosts) {
    EXPECT_EQ(h.marker_stamps.size(), static_cast<std::size_t>(isochrons_per_node));
  }
}

TEST(Engine, OneSwitchInlineKeepsTheIsotachContract) {
  cluster c(std::make_shared<topology>(topology::single_switch(4)), nic_run::inline_poll);
  random_workload(c, 300, 1);
}

TEST(Engine, OneSwitchThreadsKeepTheIsotachContract) {
  cluster c(std::make_shared<topology>(topology::single_switch(3)), nic_run::thread);
  random_workload(c, 300, 2);
}

TEST(Engine, OneSwitchWithASingleTmKeepsTheIsotachContract) {
  auto topo = parse_topology(R"(switch { name: "s0" node: 0 node: 1 node: 2 tm_host: 1 })", 3);
  ASSERT_TRUE(topo.ok()) << topo.status();
  cluster c(std::make_shared<topology>(*topo), nic_run::inline_poll);
  random_workload(c, 300, 5);
}

// Node 0 parks; nodes 1 and 2 run on while node 0's NIC is not polled, so more token packets
// wait for its copy of the TM than one poll handles. When node 0 unparks, that copy answers
// with a pulse far below the others' answers. The SIU must resume above every answer and
// still get its tokens out: it once waited for a TM token from its own copy, which waited
// for a token from it.
TEST(Engine, ParkedSiuResumesAboveEveryCopysAnswer) {
  cluster c(std::make_shared<topology>(topology::single_switch(3)), nic_run::inline_poll);
  c.submit(0, {1, 2});
  c.drain(2);
  // Idle long enough for every SIU to park (an SIU parks after 1024 idle rounds).
  for (int i = 0; i < 2500; ++i) c.pump();
  // Node 1 unparks while every NIC runs (unparking needs every copy's answer), then stays
  // busy enough not to park again.
  c.submit(1, {2});
  c.drain(3);
  std::uint64_t expected = 3;
  for (int round = 0; round < 200; ++round) {
    c.submit(1, {2});
    ++expected;
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (c.hosts[2].packets + 1 < expected || !c.hosts[1].items.empty() ||
           !c.hosts[2].items.empty()) {
      c.pump(1);
      c.pump(2);
      ASSERT_LT(absl::Now(), deadline) << "nodes 1 and 2 stalled without node 0";
    }
  }
  c.submit(0, {1, 2});
  c.drain(expected + 2);
  c.expect_consistent();
}

// The same under threads, where NICs sleep and wake at random: isochrons from random nodes,
// each drained before the next, so SIUs park and resume often.
TEST(Engine, ParkedSiusResumeWithReplicatedTms) {
  cluster c(std::make_shared<topology>(topology::single_switch(3)), nic_run::thread);
  std::mt19937 rng(6);
  std::uint64_t expected = 0;
  for (int round = 0; round < 300; ++round) {
    const comm::node_id from = rng() % 3;
    std::vector<comm::node_id> destinations;
    for (comm::node_id d = 0; d < 3; ++d) {
      if (d != from && (rng() % 2 || destinations.empty())) destinations.push_back(d);
    }
    expected += destinations.size();
    c.submit(from, destinations);
    c.drain(expected);
  }
  c.expect_consistent();
}

// An SIU and its own node's TM copy call each other: in a ping-pong no token packet goes to
// the node itself. And each node sends the other one token per round, behind its isochron:
// an SIU that stamped went as far as its stamp, so the other's answer finds it far enough
// already, and closing that answer's pulse needs no token from it first.
TEST(Engine, PingPongSendsNoTokenToItself) {
  cluster c(std::make_shared<topology>(topology::single_switch(2)), nic_run::inline_poll);
  constexpr int kRounds = 200;
  for (int round = 0; round < kRounds; ++round) {
    for (comm::node_id from : {0u, 1u}) {
      const comm::node_id to = 1 - from;
      c.submit(from, {to});
      const std::uint64_t expected = round + 1;
      const absl::Time deadline = absl::Now() + absl::Seconds(60);
      // Polls the receiver first, so the reply goes out as soon as the ping's pulse closes.
      while (c.hosts[to].packets < expected || !c.hosts[to].items.empty()) {
        c.pump(to);
        c.pump(from);
        ASSERT_LT(absl::Now(), deadline) << "round " << round << " never closed at " << to;
      }
    }
  }
  c.expect_consistent();
  for (comm::node_id n : {0u, 1u}) {
    const peer_counts to_peer = c.nics[n]->counts(1 - n);
    const peer_counts to_self = c.nics[n]->counts(n);
    const auto siu_tokens = static_cast<std::size_t>(packet_type::siu_token);
    EXPECT_LE(to_peer.packets_sent[siu_tokens], kRounds + 4) << "node " << n;
    // A message whose pulse closes in the round it arrives reaches the host together with
    // that pulse's EOP, in one record.
    EXPECT_GT(c.hosts[n].closing_data, static_cast<std::uint64_t>(kRounds / 2)) << "node " << n;
    EXPECT_EQ(to_self.packets_sent[siu_tokens], 0u) << "node " << n;
    EXPECT_EQ(to_self.packets_sent[static_cast<std::size_t>(packet_type::tm_token)], 0u);
  }
}

TEST(Engine, ThreeSwitchChainKeepsTheIsotachContract) {
  auto topo = parse_topology(R"(
    switch { name: "a" node: 0 node: 1 link: "b" }
    switch { name: "b" node: 2 link: "c" }
    switch { name: "c" node: 3 node: 4 tm_host: 3 }
  )",
                             5);
  ASSERT_TRUE(topo.ok()) << topo.status();
  cluster c(std::make_shared<topology>(*topo), nic_run::inline_poll);
  random_workload(c, 200, 3);
}

TEST(Engine, OneTokenPerLoopWorksToo) {
  cluster c(std::make_shared<topology>(topology::single_switch(3, 1)), nic_run::inline_poll);
  random_workload(c, 200, 4);
}

// Isochrons the NIC takes in one batch get one stamp, and so share one marker; the next
// batch gets the next.
TEST(Engine, IsochronsStampedAlikeShareOneMarker) {
  cluster c(std::make_shared<topology>(topology::single_switch(2)), nic_run::inline_poll);
  constexpr int kIsochrons = 10;
  for (int i = 0; i < kIsochrons; ++i) c.submit(0, {1});
  c.drain(kIsochrons);
  c.expect_consistent();
  ASSERT_EQ(c.hosts[0].marker_stamps.size(), static_cast<std::size_t>(kIsochrons));
  EXPECT_EQ(c.hosts[0].marker_stamps.front(), c.hosts[0].marker_stamps.back());
  EXPECT_EQ(c.hosts[0].marker_deliveries, 1u);

  c.submit(0, {1});
  c.drain(kIsochrons + 1);
  c.expect_consistent();
  ASSERT_EQ(c.hosts[0].marker_stamps.size(), static_cast<std::size_t>(kIsochrons + 1));
  EXPECT_GT(c.hosts[0].marker_stamps.back(), c.hosts[0].marker_stamps.front());
  EXPECT_EQ(c.hosts[0].marker_deliveries, 2u);
}

TEST(Engine, StampsRespectDistance) {
  auto topo = parse_topology(R"(
    switch { name: "a" node: 0 link: "b" }
    switch { name: "b" node: 1 }
  )",
                             2);
  ASSERT_TRUE(topo.ok());
  cluster c(std::make_shared<topology>(*topo), nic_run::inline_poll);
  c.submit(0, {1});
  c.drain(1);
  ASSERT_EQ(c.hosts[0].marker_stamps.size(), 1u);
  EXPECT_GE(c.hosts[0].marker_stamps[0], topo->distance(0, 1));
  c.expect_consistent();
}

// Lazy time: with nothing to do, no tokens move, so logical time stands still.
TEST(Engine, IdleJobHoldsTimeStill) {
  cluster c(std::make_shared<topology>(topology::single_switch(3)), nic_run::inline_poll);
  c.submit(1, {0, 2});
  c.drain(2);
  for (int i = 0; i < 100; ++i) c.pump();
  const std::uint64_t pulse = c.nics[0]->time().pulse;
  for (int i = 0; i < 1000; ++i) c.pump();
  EXPECT_EQ(c.nics[0]->time().pulse, pulse);
  EXPECT_GT(pulse, 0u);
}

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

// A NIC about to sleep parks its idle SIU, so that nobody has to wake it for a token; an
// SIU that merely counted idle rounds would stay active far longer than a host spins.
TEST(Engine, AnInlineNicParksItsIdleSiuBeforeItSleeps) {
  cluster c(std::make_shared<topology>(topology::single_switch(2)), nic_run::inline_poll);
  c.submit(0, {1});
  c.drain(1);
  c.pump();  // a round with nothing to do
  const auto park = static_cast<std::size_t>(packet_type::park);
  const std::uint64_t parks_before = c.nics[0]->counts(1).packets_sent[park];
  c.nics[0]->wait(absl::ZeroDuration());
  EXPECT_EQ(c.nics[0]->counts(1).packets_sent[park], parks_before + 1);
  // Parked, it stamps again after unparking, and the job goes on.
  c.submit(0, {1});
  c.drain(2);
  c.expect_consistent();
}

// A NIC thread whose host's demand is met goes to sleep. (An SIU goes only to want - K, so
// "the SIU's pulse has reached the demand" never becomes true; a NIC thread that waited for
// that once spun forever after a barrier.)
TEST(Engine, NicThreadsSleepOnceAHostDemandIsMet) {
  cluster c(std::make_shared<topology>(topology::single_switch(2)), nic_run::thread);
  c.submit(0, {1});
  c.drain(1);
  const std::uint64_t pulse = c.hosts[0].marker_stamps.at(0);
  c.nics[0]->demand(pulse + 3);
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (c.nics[0]->time().closed < pulse + 2) {
    ASSERT_LT(absl::Now(), deadline) << "the demanded pulse never closed";
    std::this_thread::yield();
  }
  // Measured over a stretch: two spinning NIC threads would use about a core each.
  const double before = cpu_seconds();
  const absl::Time start = absl::Now();
  absl::SleepFor(absl::Milliseconds(400));
  const double used = (cpu_seconds() - before) / absl::ToDoubleSeconds(absl::Now() - start);
  EXPECT_LT(used, 0.3) << "CPU share of the idle job (cores)";
}

// A host that asked for pulses and sleeps until they close is woken when they do, also
// when they carry nothing for it (a local isochron placed after a same-host read waits so).
// It once slept until its sleep's time-out: the NIC rang on closes only for same-host
// readers of the host's copies.
TEST(Engine, AHostAsleepOnPulsesItDemandedWakesWhenTheyClose) {
  cluster c(std::make_shared<topology>(topology::single_switch(2)), nic_run::thread);
  c.submit(0, {1});
  c.drain(1);
  host_channel& channel = c.nics[0]->channel();
  for (int round = 0; round < 3; ++round) {
    const std::uint64_t target = c.nics[0]->time().closed + 3;
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    bool demanded = false;
    while (c.nics[0]->time().closed < target && absl::Now() < deadline) {
      channel.host_poll([&](const delivery& d) { c.hosts[0].on_delivery(d); });
      channel.host_wait(deadline - absl::Now(), [&] {
        // Asked for once the sleep is announced, so that the pulses cannot close before it.
        if (!demanded) c.nics[0]->demand(target + 1);
        demanded = true;
        return c.nics[0]->time().closed < target;
      });
    }
    ASSERT_LT(absl::Now(), deadline) << "no ring woke the host as the pulses it asked for closed";
  }
  EXPECT_TRUE(c.hosts[0].problems.empty());
}

}  // namespace
}  // namespace iso::nicfw

namespace iso::nicfw {
namespace {

// A packet's type is input: one outside the engine's table is refused as unknown, never
// taken for the bound type it equals modulo the table's size.
TEST(Engine, APacketOfATypeBeyondTheTableIsRefusedAsUnknown) {
  iso::test::allow_log_lines_in_this_test();  // the NIC logs why it stopped
  auto topo = std::make_shared<topology>(topology::single_switch(2));
  auto transports = comm::make_inproc_fabric(2, {.ring_capacity = 1 << 16});
  ASSERT_TRUE(transports.ok());
  engine nic(0, topo, std::move((*transports)[0]),
             engine_options{.own_thread = false, .local_nodes = 2, .local_index = 0});
  comm::transport& stranger = *(*transports)[1];
  const auto type =
      static_cast<packet_type>(kPacketTypes + static_cast<int>(packet_type::iso_data));
  const packet_header header{.type = type};
  ASSERT_TRUE(stranger.send(0, std::as_bytes(std::span(&header, 1))).ok());
  absl::Status status;
  for (int round = 0; round < 100 && status.ok(); ++round) {
    bool did = false;
    status = nic.poll(did);
  }
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find(absl::StrFormat("unknown type %d from node 1", kPacketTypes + 1)),
            std::string_view::npos)
      << status;
}

}  // namespace
}  // namespace iso::nicfw

namespace iso::nicfw {
namespace {

// A service that only records the packets it gets, for the engine's own promises.
class recording_service final : public nic_service {
 public:
  absl::Status on_packet(comm::node_id source, const packet_header& header,
                         comm::byte_span body) override {
    (void)source;
    (void)header;
    got.emplace_back(body.begin(), body.end());
    return absl::OkStatus();
  }
  std::vector<std::vector<std::byte>> got;
};

constexpr auto kWholeType = static_cast<packet_type>(kFirstServicePacketType + 14);
constexpr auto kOnePacketType = static_cast<packet_type>(kFirstServicePacketType + 15);
constexpr packet_binding kRecordedPackets[] = {
    {.type = kWholeType, .name = "whole", .fragmented = true},
    {.type = kOnePacketType, .name = "one_packet"},
};

// A type bound as fragmented travels in fragments and arrives whole, whether or not it
// carries credits; a type that is not refuses a payload one packet cannot hold.
TEST(Engine, AFragmentedTypeWithoutCreditsArrivesWhole) {
  auto topo = std::make_shared<topology>(topology::single_switch(2));
  auto transports = comm::make_inproc_fabric(2, {.ring_capacity = 1 << 16});
  ASSERT_TRUE(transports.ok());
  const std::size_t packet_bytes = (*transports)[0]->max_packet_size();
  std::vector<std::unique_ptr<engine>> nics;
  std::vector<recording_service*> services;
  for (comm::node_id n = 0; n < 2; ++n) {
    nics.push_back(std::make_unique<engine>(
        n, topo, std::move((*transports)[n]),
        engine_options{.own_thread = false, .local_nodes = 2, .local_index = n}));
    auto service = std::make_unique<recording_service>();
    services.push_back(service.get());
    nics[n]->add_service(std::move(service), {.packets = kRecordedPackets, .submissions = {}});
  }
  std::vector<std::byte> payload(3 * packet_bytes + 17);
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::byte>(i * 7);
  absl::StatusOr<std::uint32_t> sent =
      nics[0]->context().send(1, packet_header{.type = kWholeType}, payload);
  ASSERT_TRUE(sent.ok()) << sent.status();
  EXPECT_GE(*sent, 4u);
  for (int round = 0; round < 1000 && services[1]->got.empty(); ++round) {
    for (auto& nic : nics) {
      bool did = false;
      ASSERT_TRUE(nic->poll(did).ok());
    }
  }
  ASSERT_EQ(services[1]->got.size(), 1u);
  EXPECT_TRUE(services[1]->got[0] == payload) << "the payload arrived changed";

  absl::StatusOr<std::uint32_t> refused =
      nics[0]->context().send(1, packet_header{.type = kOnePacketType}, payload);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kOutOfRange) << refused.status();
  EXPECT_NE(refused.status().message().find(
                absl::StrFormat("%u bytes", payload.size() + sizeof(packet_header))),
            std::string_view::npos)
      << refused.status();
}

// A service that records the submissions it takes, and declines them while told to.
class submission_recorder final : public nic_service {
 public:
  absl::Status on_packet(comm::node_id, const packet_header&, comm::byte_span) override {
    return absl::OkStatus();
  }
  absl::Status on_submission(const submission& s, bool& taken) override {
    taken = !declining;
    if (taken)
      taken_payloads.emplace_back(s.parts[0].operations.begin(), s.parts[0].operations.end());
    return absl::OkStatus();
  }
  bool declining = false;
  std::vector<std::vector<std::byte>> taken_payloads;
};

constexpr auto kRecordedSubmission = static_cast<submission_kind>(kFirstServiceSubmission + 40);
constexpr submission_kind kRecordedSubmissions[] = {kRecordedSubmission};

std::vector<std::byte> bytes_of(std::string_view text) {
  const auto b = std::as_bytes(std::span(text));
  return {b.begin(), b.end()};
}

// Inline, a submission goes to its service at once, without the host queue, but only when
// nothing is queued before it: the order of a node's submissions is kept.
TEST(Engine, ASubmissionSentAtOnceNeverOvertakesOneQueuedBeforeIt) {
  auto topo = std::make_shared<topology>(topology::single_switch(1));
  auto transports = comm::make_inproc_fabric(1, {.ring_capacity = 1 << 16});
  ASSERT_TRUE(transports.ok());
  engine nic(0, topo, std::move((*transports)[0]),
             engine_options{.own_thread = false, .local_nodes = 1, .local_index = 0});
  auto owned = std::make_unique<submission_recorder>();
  submission_recorder& service = *owned;
  nic.add_service(std::move(owned), {.packets = {}, .submissions = kRecordedSubmissions});
  nic.start();
  const std::vector<std::byte> head = bytes_of("head:"), a = bytes_of("a"), b = bytes_of("b"),
                               c = bytes_of("c");

  // Nothing queued: taken at once, its pieces gathered in order.
  const comm::byte_span first[] = {head, a};
  absl::StatusOr<bool> sent = nic.send_at_once(kRecordedSubmission, 0, first);
  ASSERT_TRUE(sent.ok()) << sent.status();
  EXPECT_TRUE(*sent);
  ASSERT_EQ(service.taken_payloads.size(), 1u);
  EXPECT_EQ(service.taken_payloads[0], bytes_of("head:a"));

  // The service declines: nothing is taken, and the host queues it.
  service.declining = true;
  const comm::byte_span second[] = {b};
  sent = nic.send_at_once(kRecordedSubmission, 0, second);
  ASSERT_TRUE(sent.ok()) << sent.status();
  EXPECT_FALSE(*sent);
  ASSERT_TRUE(nic.channel().host_submit(kRecordedSubmission, 0, second));
  service.declining = false;

  // Queued before it: declined, so it queues behind, and both go in order.
  const comm::byte_span third[] = {c};
  sent = nic.send_at_once(kRecordedSubmission, 0, third);
  ASSERT_TRUE(sent.ok()) << sent.status();
  EXPECT_FALSE(*sent) << "sent at once past a submission queued before it";
  ASSERT_TRUE(nic.channel().host_submit(kRecordedSubmission, 0, third));
  bool did = false;
  ASSERT_TRUE(nic.poll(did).ok());
  ASSERT_EQ(service.taken_payloads.size(), 3u);
  EXPECT_EQ(service.taken_payloads[1], b);
  EXPECT_EQ(service.taken_payloads[2], c);

  // An isochron always goes through the queue (the SIU stamps it there).
  sent = nic.send_at_once(submission_kind::isochron, 0, third);
  ASSERT_TRUE(sent.ok()) << sent.status();
  EXPECT_FALSE(*sent);
}

}  // namespace
}  // namespace iso::nicfw
