// Multicast and sequenced delivery on the NIC (nicfw/multicast_service.hpp), on engines over
// the inproc transport with fake hosts: every member gets every message once, in its
// sender's order; sequenced groups deliver one order at every member; credits keep a
// member that does not poll from losing anything or from growing any NIC's buffers.
#include "nicfw/multicast_service.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "comm/inproc.hpp"
#include "nicfw/engine.hpp"

namespace iso::nicfw {
namespace {

struct received {
  std::uint32_t group;
  comm::node_id sender;
  std::uint64_t stamp;
  std::uint32_t index;  // the sender's message index, from the payload
  bool operator==(const received&) const = default;
};

// The payload: (sender, index), then `extra` bytes derived from them.
std::vector<std::byte> make_payload(comm::node_id sender, std::uint32_t index, std::size_t extra) {
  std::vector<std::byte> p(8 + extra);
  std::memcpy(p.data(), &sender, 4);
  std::memcpy(p.data() + 4, &index, 4);
  for (std::size_t i = 0; i < extra; ++i)
    p[8 + i] = static_cast<std::byte>(sender * 31 + index + i);
  return p;
}

struct cluster {
  std::vector<std::unique_ptr<engine>> nics;
  std::vector<multicast_service*> services;
  std::vector<std::vector<received>> got;  // by node, in delivery order
  std::vector<bool> paused;                // hosts that do not poll
  std::vector<std::uint64_t> bad_payloads;

  cluster(std::uint32_t n, bool own_thread, multicast_options mopts = {}) {
    auto topo = std::make_shared<topology>(topology::single_switch(n));
    auto transports = comm::make_inproc_fabric(n, {.ring_capacity = 1 << 16});
    EXPECT_TRUE(transports.ok());
    got.resize(n);
    paused.assign(n, false);
    bad_payloads.assign(n, 0);
    for (comm::node_id i = 0; i < n; ++i) {
      nics.push_back(std::make_unique<engine>(i, topo, std::move((*transports)[i]),
                                              engine_options{.own_thread = own_thread,
                                                             .local_nodes = n,
                                                             .local_index = i,
                                                             .host_queue_bytes = 1 << 22}));
      auto service = std::make_unique<multicast_service>(nics.back()->context(), mopts);
      services.push_back(service.get());
      nics.back()->add_service(std::move(service), multicast_service::kBinding);
    }
    for (auto& nic : nics) nic->start();
  }

  // Runs node i's NIC (inline) and takes its host's deliveries.
  void pump(comm::node_id i) {
    if (paused[i]) return;
    if (nics[i]->runs_inline()) {
      bool did = false;
      absl::Status s = nics[i]->poll(did);
      ASSERT_TRUE(s.ok()) << s;
    }
    std::uint64_t taken = 0;
    nics[i]->channel().host_poll([&](const delivery& d) {
      ++taken;
      ASSERT_EQ(d.kind, kMulticastDelivery);
      ASSERT_GE(d.payload.size(), 8u);
      received r{.group = d.sequence, .sender = d.source, .stamp = d.stamp, .index = 0};
      comm::node_id sender = 0;
      std::memcpy(&sender, d.payload.data(), 4);
      std::memcpy(&r.index, d.payload.data() + 4, 4);
      const std::vector<std::byte> expected = make_payload(sender, r.index, d.payload.size() - 8);
      if (sender != d.source || !std::equal(expected.begin(), expected.end(), d.payload.begin())) {
        ++bad_payloads[i];
      }
      got[i].push_back(r);
    });
    if (taken != 0) {
      services[i]->host_consumed(taken);
      nics[i]->wake();
    }
  }
  void pump_all() {
    for (comm::node_id i = 0; i < nics.size(); ++i) pump(i);
  }

  // Queues a message of `sender` for `members`; false when the host queue is full.
  bool try_submit(comm::node_id sender, std::uint32_t group,
                  const std::vector<comm::node_id>& members, tree_shape shape, std::uint8_t flags,
                  const std::vector<std::byte>& payload) {
    const multicast_prefix prefix{.root = sender,
                                  .group = group,
                                  .sequencer = members.front(),
                                  .members = static_cast<std::uint16_t>(members.size()),
                                  .shape = shape,
                                  .flags = flags};
    const comm::byte_span pieces[] = {std::as_bytes(std::span(&prefix, 1)),
                                      std::as_bytes(std::span(members)), payload};
    if (!services[sender]->host_may_submit() ||
        !nics[sender]->channel().host_submit(kMulticastSubmission, sender, pieces)) {
      return false;
    }
    services[sender]->host_submitted();
    nics[sender]->wake();
    return true;
  }
  void submit(comm::node_id sender, std::uint32_t group, const std::vector<comm::node_id>& members,
              tree_shape shape, std::uint8_t flags, const std::vector<std::byte>& payload) {
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (!try_submit(sender, group, members, shape, flags, payload)) {
      pump_all();
      ASSERT_LT(absl::Now(), deadline) << "node " << sender << " cannot submit";
    }
  }

  [[nodiscard]] std::size_t count(comm::node_id i, std::uint32_t group) const {
    return static_cast<std::size_t>(std::count_if(
        got[i].begin(), got[i].end(), [&](const received& r) { return r.group == group; }));
  }
  // Pumps until every (node, group) of `want` has its count; fails after 30 s.
  void wait_for(const std::map<std::pair<comm::node_id, std::uint32_t>, std::size_t>& want) {
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    for (;;) {
      pump_all();
      bool done = true;
      for (const auto& [key, n] : want) done &= count(key.first, key.second) >= n;
      if (done) return;
      if (absl::Now() >= deadline) {
        std::string state;
        for (const auto& [key, n] : want) {
          state += " node " + std::to_string(key.first) + " group " + std::to_string(key.second) +
                   ": " + std::to_string(count(key.first, key.second)) + "/" + std::to_string(n);
        }
        for (comm::node_id i = 0; i < nics.size(); ++i) {
          state += " nic " + std::to_string(i) + " holds " +
                   std::to_string(services[i]->messages_held()) + " (" +
                   nics[i]->failure().ToString() + ") " + services[i]->describe() + "\n";
        }
        FAIL() << "deliveries did not come:" << state;
      }
    }
  }

  [[nodiscard]] std::vector<received> of_group(comm::node_id i, std::uint32_t group) const {
    std::vector<received> out;
    for (const received& r : got[i]) {
      if (r.group == group) out.push_back(r);
    }
    return out;
  }
};

// Pumps until no NIC of `c` holds a lane; false after 30 s.
bool lanes_settle(cluster& c) {
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  for (;;) {
    c.pump_all();
    if (std::all_of(c.services.begin(), c.services.end(),
                    [](const multicast_service* s) { return s->lanes_held() == 0; })) {
      return true;
    }
    if (absl::Now() >= deadline) return false;
  }
}

// Every member got `per_sender` messages of each sender, in the order it sent them.
void expect_fifo_per_sender(const std::vector<received>& seq,
                            const std::vector<comm::node_id>& senders, std::uint32_t per_sender,
                            const std::string& where) {
  std::map<comm::node_id, std::uint32_t> next;
  for (const received& r : seq) {
    ASSERT_EQ(r.index, next[r.sender]) << where << ": sender " << r.sender << " out of order";
    ++next[r.sender];
  }
  for (comm::node_id s : senders) EXPECT_EQ(next[s], per_sender) << where << " sender " << s;
}

std::vector<comm::node_id> all_nodes(std::uint32_t n) {
  std::vector<comm::node_id> v(n);
  for (comm::node_id i = 0; i < n; ++i) v[i] = i;
  return v;
}

struct shape_and_mode {
  tree_shape shape;
  bool own_thread;
};
std::string name_of(const testing::TestParamInfo<shape_and_mode>& info) {
  return std::string(tree_shape_name(info.param.shape)) +
         (info.param.own_thread ? "OnNicThreads" : "Inline");
}
class Multicast : public testing::TestWithParam<shape_and_mode> {};
INSTANTIATE_TEST_SUITE_P(Shapes, Multicast,
                         testing::Values(shape_and_mode{tree_shape::binary, false},
                                         shape_and_mode{tree_shape::chain, false},
                                         shape_and_mode{tree_shape::binomial, false},
                                         shape_and_mode{tree_shape::binary, true},
                                         shape_and_mode{tree_shape::chain, true},
                                         shape_and_mode{tree_shape::binomial, true}),
                         name_of);

// Unsequenced: every node multicasts to the whole job, some messages larger than a
// transport packet; each member gets each message once, uncorrupted, in its sender's order.
TEST_P(Multicast, EveryMemberGetsEveryMessageInItsSendersOrder) {
  constexpr std::uint32_t kNodes = 5;
  constexpr std::uint32_t each = 150;
  cluster c(kNodes, GetParam().own_thread);
  const auto members = all_nodes(kNodes);
  for (std::uint32_t k = 0; k < each; ++k) {
    for (comm::node_id s = 0; s < kNodes; ++s) {
      const std::size_t extra = k % 50 == 7 ? 200'000 : (k * 13 + s) % 300;
      c.submit(s, 1, members, GetParam().shape, 0, make_payload(s, k, extra));
    }
  }
  std::map<std::pair<comm::node_id, std::uint32_t>, std::size_t> want;
  for (comm::node_id i = 0; i < kNodes; ++i) want[{i, 1}] = kNodes * each;
  c.wait_for(want);
  for (comm::node_id i = 0; i < kNodes; ++i) {
    EXPECT_EQ(c.got[i].size(), kNodes * each);
    EXPECT_EQ(c.bad_payloads[i], 0u) << "node " << i;
    expect_fifo_per_sender(c.got[i], members, each, "node " + std::to_string(i));
  }
}

// Unsequenced, every node a sender to overlapping groups, chains (whose links carry the
// messages of every root) and a window far below what the flood puts in flight: every NIC
// forwards while its own host keeps submitting, and nothing waits in a cycle. (Three nodes
// on one chain hung when unsequenced multicasts shared one pool of credits per peer.)
TEST(MulticastUnsequenced, ManySendersOverChainsFloodingAtOnceDoNotDeadlock) {
  const multicast_options mopts{.window = 4, .sequencer_window = 4};
  constexpr std::uint32_t kEach = 100;
  for (std::uint32_t n = 3; n <= 6; ++n) {
    for (tree_shape shape : {tree_shape::chain, tree_shape::binary, tree_shape::binomial}) {
      SCOPED_TRACE(std::to_string(n) + " nodes, " + std::string(tree_shape_name(shape)));
      cluster c(n, /*own_thread=*/false, mopts);
      std::map<std::uint32_t, std::vector<comm::node_id>> groups = {{2, all_nodes(n)}};
      for (comm::node_id left_out = 0; left_out < n; ++left_out) {
        std::vector<comm::node_id>& g = groups[10 + left_out];
        for (comm::node_id i = 0; i < n; ++i) {
          if (i != left_out) g.push_back(i);
        }
      }
      for (std::uint32_t k = 0; k < kEach; ++k) {
        for (const auto& [group, members] : groups) {
          for (comm::node_id s : members) {
            c.submit(s, group, members, shape, 0, make_payload(s, k, (k * 7 + s) % 100));
            if (HasFatalFailure()) return;  // stuck: one report is enough
          }
        }
      }
      std::map<std::pair<comm::node_id, std::uint32_t>, std::size_t> want;
      for (const auto& [group, members] : groups) {
        for (comm::node_id i : members) want[{i, group}] = members.size() * kEach;
      }
      c.wait_for(want);
      if (HasFatalFailure()) return;
      for (const auto& [group, members] : groups) {
        for (comm::node_id i : members) {
          expect_fifo_per_sender(c.of_group(i, group), members, kEach,
                                 "group " + std::to_string(group) + " node " + std::to_string(i));
        }
      }
      for (comm::node_id i = 0; i < n; ++i) EXPECT_EQ(c.bad_payloads[i], 0u) << "node " << i;
      EXPECT_TRUE(lanes_settle(c)) << "lanes stay busy after the flood";
    }
  }
}

// Sequenced, overlapping subsets, concurrent senders: the members of a group deliver its
// messages in one order, numbered 0, 1, 2, ... with no gap; non-members get nothing of it.
TEST_P(Multicast, SequencedGroupsDeliverOneOrderAtEveryMember) {
  constexpr std::uint32_t kNodes = 6;
  constexpr std::uint32_t kEach = 120;
  cluster c(kNodes, GetParam().own_thread);
  const std::map<std::uint32_t, std::vector<comm::node_id>> groups = {
      {7, {0, 2, 4, 5}}, {9, {1, 2, 3, 5}}, {11, all_nodes(kNodes)}};
  for (std::uint32_t k = 0; k < kEach; ++k) {
    for (const auto& [g, members] : groups) {
      for (comm::node_id s : members) {
        const std::size_t extra = k % 40 == 3 ? 100'000 : (k + s) % 64;
        c.submit(s, g, members, GetParam().shape, kMulticastSequenced, make_payload(s, k, extra));
      }
    }
  }
  std::map<std::pair<comm::node_id, std::uint32_t>, std::size_t> want;
  for (const auto& [g, members] : groups) {
    for (comm::node_id i : members) want[{i, g}] = members.size() * kEach;
  }
  c.wait_for(want);
  for (const auto& [g, members] : groups) {
    const std::vector<received> first = c.of_group(members.front(), g);
    ASSERT_EQ(first.size(), members.size() * kEach);
    for (std::size_t k = 0; k < first.size(); ++k) ASSERT_EQ(first[k].stamp, k) << "group " << g;
    for (comm::node_id i = 0; i < kNodes; ++i) {
      const bool member = std::find(members.begin(), members.end(), i) != members.end();
      const std::string where = "group " + std::to_string(g) + " node " + std::to_string(i);
      if (!member) {
        EXPECT_EQ(c.count(i, g), 0u) << where;
        continue;
      }
      EXPECT_EQ(c.of_group(i, g), first) << where;
      expect_fifo_per_sender(c.of_group(i, g), members, kEach, where);
    }
  }
  for (comm::node_id i = 0; i < kNodes; ++i) EXPECT_EQ(c.bad_payloads[i], 0u);
}

// From 2 to 8 nodes, every shape: one order everywhere.
TEST(MulticastSizes, SequencedOrderHoldsFromTwoToEightNodes) {
  for (std::uint32_t n = 2; n <= 8; ++n) {
    for (tree_shape shape : {tree_shape::binary, tree_shape::chain, tree_shape::binomial}) {
      cluster c(n, /*own_thread=*/false);
      const auto members = all_nodes(n);
      for (std::uint32_t k = 0; k < 40; ++k) {
        for (comm::node_id s = 0; s < n; ++s) {
          c.submit(s, 3, members, shape, kMulticastSequenced, make_payload(s, k, 16));
        }
      }
      std::map<std::pair<comm::node_id, std::uint32_t>, std::size_t> want;
      for (comm::node_id i = 0; i < n; ++i) want[{i, 3}] = n * 40;
      c.wait_for(want);
      for (comm::node_id i = 1; i < n; ++i) {
        EXPECT_EQ(c.got[i], c.got[0])
            << n << " nodes, " << tree_shape_name(shape) << ", node " << i;
      }
    }
  }
}

// A number given back (a null) fills its place at every member and is not delivered.
TEST(MulticastSizes, ANullFillsItsNumbersPlace) {
  cluster c(4, /*own_thread=*/false);
  const auto members = all_nodes(4);
  for (std::uint32_t k = 0; k < 30; ++k) {
    for (comm::node_id s = 0; s < 4; ++s) {
      const bool null = s == 2 && k % 3 == 0;
      c.submit(s, 5, members, tree_shape::binary,
               null ? kMulticastSequenced | kMulticastNull : kMulticastSequenced,
               make_payload(s, null ? 999 : k, 0));
    }
  }
  constexpr std::size_t kReal = 4 * 30 - 10;
  std::map<std::pair<comm::node_id, std::uint32_t>, std::size_t> want;
  for (comm::node_id i = 0; i < 4; ++i) want[{i, 5}] = kReal;
  c.wait_for(want);
  for (comm::node_id i = 0; i < 4; ++i) {
    ASSERT_EQ(c.got[i].size(), kReal);
    EXPECT_EQ(c.got[i], c.got[0]);
    for (const received& r : c.got[i]) EXPECT_NE(r.index, 999u) << "a null was delivered";
    EXPECT_EQ(c.got[i].back().stamp, 4u * 30 - 1) << "the last number was not the last delivered";
  }
}

// An unsequenced group's name may be used again for other members: each message travels
// along the tree of the members it names, not along one the NIC kept from an earlier
// message of that name and sender.
TEST(MulticastSizes, AGroupNameUsedAgainForOtherMembersTakesTheirTree) {
  cluster c(5, /*own_thread=*/false);
  const std::vector<std::vector<comm::node_id>> rounds = {
      {0, 1, 2, 3, 4}, {0, 2, 3}, {0, 1, 4}, {0, 1, 2, 3, 4}};
  std::map<std::pair<comm::node_id, std::uint32_t>, std::size_t> want;
  for (std::uint32_t k = 0; k < rounds.size(); ++k) {
    c.submit(0, 9, rounds[k], tree_shape::chain, 0, make_payload(0, k, 0));
    for (comm::node_id i : rounds[k]) ++want[{i, 9}];
    c.wait_for(want);
  }
  for (comm::node_id i = 0; i < 5; ++i) {
    std::vector<std::uint32_t> indexes;
    for (const received& r : c.got[i]) indexes.push_back(r.index);
    std::vector<std::uint32_t> expected;
    for (std::uint32_t k = 0; k < rounds.size(); ++k) {
      if (std::find(rounds[k].begin(), rounds[k].end(), i) != rounds[k].end()) {
        expected.push_back(k);
      }
    }
    EXPECT_EQ(indexes, expected) << "node " << i;
    EXPECT_TRUE(c.nics[i]->failure().ok()) << "node " << i << ": " << c.nics[i]->failure();
  }
}

// A thousand groups used one after another, sequenced and unsequenced: once a group's
// messages are consumed its lanes are idle and go, so no NIC keeps more lanes than the
// groups in use need.
TEST(MulticastLanes, IdleLanesAreFreedSoTheirNumberDoesNotGrowWithTheGroupsUsed) {
  constexpr std::uint32_t kNodes = 4;
  constexpr std::uint32_t kGroups = 1000;
  cluster c(kNodes, /*own_thread=*/false, {.window = 4, .sequencer_window = 4});
  const auto members = all_nodes(kNodes);
  std::size_t most = 0;
  for (std::uint32_t g = 0; g < kGroups; ++g) {
    const std::uint8_t flags = g % 2 == 0 ? kMulticastSequenced : 0;
    for (comm::node_id s = 0; s < kNodes; ++s) {
      c.submit(s, 100 + g, members, g % 3 == 0 ? tree_shape::chain : tree_shape::binary, flags,
               make_payload(s, 0, 16));
    }
    std::map<std::pair<comm::node_id, std::uint32_t>, std::size_t> want;
    for (comm::node_id i = 0; i < kNodes; ++i) want[{i, 100 + g}] = kNodes;
    c.wait_for(want);
    if (HasFatalFailure()) return;
    for (const multicast_service* s : c.services) most = std::max(most, s->lanes_held());
  }
  // A group in use needs a lane per link of its trees, each way, and the lanes of the group
  // before it may linger until their credits are back: far below one per group ever used.
  EXPECT_LE(most, 4 * kNodes * kNodes) << "lanes piled up while the groups were used";
  EXPECT_TRUE(lanes_settle(c)) << "node 0 keeps " << c.services[0]->lanes_held()
                               << " lanes after every message was consumed";
  for (const multicast_service* s : c.services) {
    EXPECT_EQ(s->describe().find("numbering"), std::string::npos)
        << "a sender keeps the queues of groups whose numbers all came: " << s->describe();
  }
}

// A NIC as one multicast service sees it, with the packets it sends kept for the test: the
// test plays its peers by handing packets straight to the service.
class recording_nic final : public nic_context {
 public:
  explicit recording_nic(std::uint32_t nodes) : topo_(topology::single_switch(nodes)) {}

  [[nodiscard]] comm::node_id self() const override { return 0; }
  [[nodiscard]] const topology& topo() const override { return topo_; }
  absl::StatusOr<std::uint32_t> send(comm::node_id destination, packet_header header,
                                     comm::byte_span payload) override {
    (void)payload;
    sent.push_back({destination, header});
    return 1;
  }
  void deliver(const delivery& d) override {
    (void)d;
    ++delivered;
  }
  absl::Status handle_loopback(bool& progressed) override {
    progressed = false;
    return absl::OkStatus();
  }

  // Data packets sent to `to` so far.
  [[nodiscard]] std::size_t data_to(comm::node_id to) const {
    return static_cast<std::size_t>(std::count_if(sent.begin(), sent.end(), [&](const auto& p) {
      return p.first == to && p.second.type == kMulticastDataPacket;
    }));
  }

  std::vector<std::pair<comm::node_id, packet_header>> sent;
  std::uint64_t delivered = 0;

 private:
  topology topo_;
};

// A multicast's body (a submission's payload, a data packet's body) along a chain.
std::vector<std::byte> multicast_body(comm::node_id root, std::uint32_t group,
                                      const std::vector<comm::node_id>& members,
                                      std::uint8_t flags) {
  const multicast_prefix prefix{.root = root,
                                .group = group,
                                .sequencer = members.front(),
                                .members = static_cast<std::uint16_t>(members.size()),
                                .shape = tree_shape::chain,
                                .flags = flags};
  const std::vector<std::byte> payload = make_payload(root, 0, 8);
  const std::size_t members_size = members.size() * sizeof(comm::node_id);
  std::vector<std::byte> bytes(sizeof(prefix) + members_size + payload.size());
  std::memcpy(bytes.data(), &prefix, sizeof(prefix));
  std::memcpy(bytes.data() + sizeof(prefix), members.data(), members_size);
  std::memcpy(bytes.data() + sizeof(prefix) + members_size, payload.data(), payload.size());
  return bytes;
}

// Node 0's multicast service with a window of 2, after it sent node 0's multicasts along
// the chain 0 -> 1 -> 2 and one of group 5 (sequenced, numbered here): two of origin 0 and
// the sequenced one went to node 1, the third of origin 0 waits for a credit.
class MulticastForgedCredits : public testing::Test {
 protected:
  void SetUp() override {
    for (int k = 0; k < 3; ++k) {
      submit(4, 0);
      consume();  // the host keeps up: node 0's own window never fills
    }
    submit(5, kMulticastSequenced);
    consume();
    ASSERT_EQ(nic_.data_to(1), 3u);
    ASSERT_EQ(nic_.data_to(2), 0u) << "node 2 is no child of node 0 in a chain";
  }

  void submit(std::uint32_t group, std::uint8_t flags) {
    const std::vector<std::byte> bytes = multicast_body(0, group, {0, 1, 2}, flags);
    submission sub;
    sub.kind = kMulticastSubmission;
    sub.parts.push_back({.destination = 0, .operations = bytes});
    bool taken = false;
    ASSERT_TRUE(service_.on_submission(sub, taken).ok());
    ASSERT_TRUE(taken);
  }

  // The host takes what was delivered; the NIC notices.
  void consume() {
    service_.host_consumed(nic_.delivered - consumed_);
    consumed_ = nic_.delivered;
    bool did = false;
    ASSERT_TRUE(service_.poll(did).ok());
  }

  absl::Status credit(comm::node_id from, std::uint64_t lane, std::uint32_t count) {
    return service_.on_packet(from, {.type = kMulticastCreditPacket, .a = count, .stamp = lane},
                              {});
  }

  // `s` is refused, and its message names `from` and `lane`.
  static void expect_refused(const absl::Status& s, comm::node_id from, const std::string& lane) {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_NE(s.message().find("from node " + std::to_string(from)), std::string::npos) << s;
    EXPECT_NE(s.message().find(lane), std::string::npos) << s;
  }

  // The lanes still work: node 1's true credits let the blocked message go, and every
  // credit back leaves no lane behind.
  void expect_lanes_intact() {
    ASSERT_TRUE(credit(1, 0, 1).ok());
    EXPECT_EQ(nic_.data_to(1), 4u) << "the blocked message did not go";
    ASSERT_TRUE(credit(1, 0, 2).ok());
    ASSERT_TRUE(credit(1, kMulticastGroupLane + 5, 1).ok());
    EXPECT_EQ(service_.lanes_held(), 0u) << service_.describe();
  }

  recording_nic nic_{3};
  std::uint64_t consumed_ = 0;
  multicast_service service_{nic_, {.window = 2, .sequencer_window = 2}};
};

TEST_F(MulticastForgedCredits, MoreCreditsThanAreOutAreRefused) {
  expect_refused(credit(1, 0, 3), 1, "origin 0");
  expect_refused(credit(1, kMulticastGroupLane + 5, 2), 1, "group 5");
  expect_lanes_intact();
}

TEST_F(MulticastForgedCredits, MoreCreditsThanTheWindowAreRefused) {
  expect_refused(credit(1, 0, 0xFFFF'FFFF), 1, "origin 0");
  expect_lanes_intact();
}

TEST_F(MulticastForgedCredits, AnEmptyCreditPacketIsRefused) {
  expect_refused(credit(1, 0, 0), 1, "origin 0");
  expect_lanes_intact();
}

TEST_F(MulticastForgedCredits, CreditsForALaneWithNoCreditsOutAreRefused) {
  // Node 0 never sent in origin 1's lane, nor in group 6's.
  expect_refused(credit(1, 1, 1), 1, "origin 1");
  expect_refused(credit(1, kMulticastGroupLane + 6, 1), 1, "group 6");
  expect_lanes_intact();
  // Every credit came back: the lanes are gone, and one more is refused.
  expect_refused(credit(1, 0, 1), 1, "origin 0");
  expect_refused(credit(1, kMulticastGroupLane + 5, 1), 1, "group 5");
}

TEST_F(MulticastForgedCredits, CreditsFromANodeThatIsNoTreeNeighbourAreRefused) {
  expect_refused(credit(2, 0, 1), 2, "origin 0");
  expect_refused(credit(2, kMulticastGroupLane + 5, 1), 2, "group 5");
  expect_lanes_intact();
}

// The same class of defect on the other side: a parent that sends beyond its credits.
TEST_F(MulticastForgedCredits, MulticastsBeyondTheSendersCreditsAreRefused) {
  // Node 1's multicasts to {0, 1}: node 0 is its child, and may hold two of them.
  const std::vector<std::byte> body = multicast_body(1, 7, {0, 1}, 0);
  const packet_header data{.type = kMulticastDataPacket};
  ASSERT_TRUE(service_.on_packet(1, data, body).ok());
  ASSERT_TRUE(service_.on_packet(1, data, body).ok());
  expect_refused(service_.on_packet(1, data, body), 1, "origin 1");
  EXPECT_EQ(nic_.delivered, 2u + 4u) << "the refused multicast was delivered";
  // Once the host took them, their credits go back and node 1 may send again.
  const std::size_t before = nic_.sent.size();
  consume();
  ASSERT_EQ(nic_.sent.size(), before + 1);
  EXPECT_EQ(nic_.sent[before].first, 1u);
  EXPECT_EQ(nic_.sent[before].second.type, kMulticastCreditPacket);
  EXPECT_EQ(nic_.sent[before].second.stamp, 1u) << "credits for origin 1's lane";
  EXPECT_EQ(nic_.sent[before].second.a, 2u);
  EXPECT_TRUE(service_.on_packet(1, data, body).ok());
  consume();
  expect_lanes_intact();
}

TEST_F(MulticastForgedCredits, AStampNamingNoLaneIsRefused) {
  expect_refused(credit(1, 3, 1), 1, "lane 3");
  expect_refused(credit(1, kMulticastGroupLane << 1, 1), 1,
                 "lane " + std::to_string(kMulticastGroupLane << 1));
  expect_lanes_intact();
}

// A member whose host does not poll for a second under a flood: the senders stall, every
// NIC holds a bounded number of messages, and once it polls again every message arrives,
// in one order.
TEST(MulticastSlowMember, NothingIsLostMemoryIsBoundedAndTheFloodResumes) {
  constexpr std::uint32_t kNodes = 4;
  constexpr std::uint32_t kEach = 1000;
  const multicast_options mopts{.window = 16, .sequencer_window = 8};
  cluster c(kNodes, /*own_thread=*/true, mopts);
  const auto members = all_nodes(kNodes);
  std::vector<std::uint32_t> sent(kNodes, 0);
  const auto flood = [&] {
    for (comm::node_id s = 0; s < 3; ++s) {
      if (sent[s] < kEach && c.try_submit(s, 1, members, tree_shape::binary, kMulticastSequenced,
                                          make_payload(s, sent[s], 64))) {
        ++sent[s];
      }
    }
    c.pump_all();
  };
  c.paused[3] = true;
  const absl::Time resume = absl::Now() + absl::Seconds(1);
  while (absl::Now() < resume) flood();
  // The senders stopped: their own windows are full of messages the slow member holds up.
  const std::size_t delivered_while_paused = c.got[0].size();
  // The slow member's NIC takes what its parents' credits allow (its host does not), and the
  // counter hands out no number beyond what it took plus the sequencer's window.
  EXPECT_LE(delivered_while_paused, mopts.window * (kNodes - 1) + mopts.sequencer_window)
      << "the group ran ahead of its slow member";
  EXPECT_TRUE(c.got[3].empty());
  c.paused[3] = false;
  while (std::any_of(sent.begin(), sent.begin() + 3, [&](std::uint32_t n) { return n < kEach; })) {
    flood();
  }
  std::map<std::pair<comm::node_id, std::uint32_t>, std::size_t> want;
  for (comm::node_id i = 0; i < kNodes; ++i) want[{i, 1}] = 3 * kEach;
  c.wait_for(want);
  for (comm::node_id i = 0; i < kNodes; ++i) {
    EXPECT_EQ(c.got[i], c.got[0]) << "node " << i;
    EXPECT_LE(c.services[i]->peak_messages_held(), mopts.window * kNodes) << "node " << i;
  }
  expect_fifo_per_sender(c.got[3], {0, 1, 2}, kEach, "the slow member");
  EXPECT_TRUE(lanes_settle(c)) << "lanes stay busy after the flood";
}

}  // namespace
}  // namespace iso::nicfw
