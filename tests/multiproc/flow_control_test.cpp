// Run by isorun as 3 processes with a small credit window (ISO_CREDIT_WINDOW, set by
// CMake). Flow control under every traffic pattern the messaging layer must survive: an
// all-to-all flood of both message models mixed with shared-variable isochrons, one slow
// receiver, one-way traffic, isochrons larger than the window, and a receiver that does
// not poll for a second. Each asserts that nothing is lost or reordered and that no node
// ever buffered more from a peer than the window allows (node::status()).
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "tests/support/job_test.hpp"

namespace {

struct header {
  std::uint32_t source;
  std::uint32_t seq;
};

// A message of `size` bytes (at least a header) whose content depends on (source, seq).
std::vector<std::byte> make_message(std::uint32_t source, std::uint32_t seq, std::size_t size) {
  std::vector<std::byte> m(std::max(size, sizeof(header)));
  const header h{source, seq};
  std::memcpy(m.data(), &h, sizeof(h));
  for (std::size_t i = sizeof(h); i < m.size(); ++i) {
    m[i] = static_cast<std::byte>(source * 31 + seq * 7 + i);
  }
  return m;
}

std::size_t size_for(std::uint32_t seq) { return 8 + (seq * 37) % 700; }

// Checks content and per-sender order; counts what arrived.
class checker {
 public:
  explicit checker(std::uint32_t nodes) : next_(nodes, 0) {}
  void take(std::span<const std::byte> bytes, std::uint32_t from) {
    ASSERT_GE(bytes.size(), sizeof(header));
    header h;
    std::memcpy(&h, bytes.data(), sizeof(h));
    ASSERT_EQ(h.source, from);
    ASSERT_EQ(h.seq, next_[from]) << "from node " << from << ": lost or reordered";
    const std::vector<std::byte> expected = make_message(h.source, h.seq, size_for(h.seq));
    ASSERT_TRUE(std::equal(bytes.begin(), bytes.end(), expected.begin(), expected.end()))
        << "message " << h.seq << " from node " << from << " is corrupt";
    ++next_[from];
    // FNV-1a over (from, seq): the same in every process (absl::Hash is seeded per process).
    for (std::uint32_t word : {from, h.seq}) {
      order_hash_ = (order_hash_ ^ word) * 1099511628211ull;
    }
  }
  [[nodiscard]] std::uint32_t from(std::uint32_t node) const { return next_[node]; }
  [[nodiscard]] std::uint64_t order_hash() const { return order_hash_; }

 private:
  std::vector<std::uint32_t> next_;
  std::uint64_t order_hash_ = 14695981039346656037ull;
};

// The buffer bound: per peer and class, the window, or one message larger than it.
void expect_bounded(iso::node& node, std::uint64_t largest_packet) {
  const iso::node_status st = node.status();
  const std::uint64_t bound = std::max<std::uint64_t>(st.credit_window, largest_packet + 64);
  for (const iso::peer_status& p : st.peers) {
    EXPECT_LE(p.isotach.peak_buffered, bound) << "isotach data from node " << p.peer;
    EXPECT_LE(p.messages.peak_buffered, bound) << "messages from node " << p.peer;
    EXPECT_EQ(p.isotach.buffered, 0u) << "isotach data from node " << p.peer << " not freed";
    EXPECT_EQ(p.messages.buffered, 0u) << "messages from node " << p.peer << " not freed";
  }
}

TEST(FlowControl, RunsWithASmallWindow) {
  iso::node& node = iso::test::job_node();
  ASSERT_EQ(node.count(), 3u);
  EXPECT_EQ(node.status().credit_window, 16384u) << "set ISO_CREDIT_WINDOW=16384";
}

// Every node sends plain and isotach messages to every node (itself included) and writes a
// shared variable, while draining what it receives; every isotach message is broadcast,
// so every node must receive them all in one order (compared through node 0).
TEST(FlowControl, AllToAllFloodOfBothModelsKeepsOrderAndContent) {
  iso::node& node = iso::test::job_node();
  const std::uint32_t n = node.count();
  auto x = node.allocate<std::int64_t>(1)[0];
  node.barrier();
  constexpr std::uint32_t kRounds = 600;
  checker plain(n);
  checker isotach(n);
  auto drain = [&] {
    while (std::optional<iso::message> m = node.try_receive()) plain.take(m->bytes(), m->source());
    while (std::optional<iso::notice> m = node.try_iso_receive()) {
      ASSERT_EQ(m->what, iso::notice::kind::message);
      isotach.take(m->bytes, m->source);
    }
  };
  for (std::uint32_t seq = 0; seq < kRounds; ++seq) {
    const std::vector<std::byte> m = make_message(node.id(), seq, size_for(seq));
    for (iso::node_id to = 0; to < n; ++to) node.send((node.id() + to) % n, m);
    {
      iso::isochron iso(node);
      for (iso::node_id to = 0; to < n; ++to) iso.send(to, m);
      iso.write(x, std::int64_t{seq});
    }
    drain();
  }
  while (plain.from(0) + plain.from(1) + plain.from(2) < n * kRounds ||
         isotach.from(0) + isotach.from(1) + isotach.from(2) < n * kRounds) {
    if (std::optional<iso::message> m = node.try_receive()) plain.take(m->bytes(), m->source());
    if (std::optional<iso::notice> m = node.try_iso_receive()) isotach.take(m->bytes, m->source);
  }
  expect_bounded(node, 1024);
  // One order of isotach messages everywhere. The barrier keeps a node that finished early
  // from sending its hash while node 0 still drains the flood (which would take the hash
  // for a flood message and wait forever for the one it displaced).
  node.barrier();
  const std::uint64_t mine = isotach.order_hash();
  node.send(0, std::as_bytes(std::span(&mine, 1)));
  if (node.id() == 0) {
    for (std::uint32_t i = 0; i < n; ++i) {
      iso::message m = node.receive();
      std::uint64_t theirs = 0;
      std::memcpy(&theirs, m.bytes().data(), sizeof(theirs));
      EXPECT_EQ(theirs, mine) << "node " << m.source() << " received another order";
    }
  }
  node.barrier();
}

// Nodes 1 and 2 stream to node 0, which receives slowly; and node 0 sends nothing back, so
// credits return only in explicit credit packets (one-way traffic).
TEST(FlowControl, SlowOneWayReceiverBoundsBuffersAndReturnsCreditsExplicitly) {
  iso::node& node = iso::test::job_node();
  const std::uint32_t n = node.count();
  node.barrier();
  constexpr std::uint32_t kMessages = 1500;  // about 25 windows per sender and class
  const iso::node_status before = node.status();
  if (node.id() != 0) {
    for (std::uint32_t seq = 0; seq < kMessages; ++seq) {
      const std::vector<std::byte> m = make_message(node.id(), seq, size_for(seq));
      node.send(0, m);
      iso::isochron iso(node);
      iso.send(0, m);
    }
    const iso::node_status st = node.status();
    EXPECT_GT(st.peers[0].received.credits, before.peers[0].received.credits)
        << "no explicit credit packet came back";
    EXPECT_LE(st.peers[0].messages.in_flight, st.credit_window);
  } else {
    checker plain(n);
    checker isotach(n);
    std::uint32_t taken = 0;
    while (taken < 2 * (n - 1) * kMessages) {
      if (taken % 256 == 0) std::this_thread::yield();  // a slow consumer
      if (std::optional<iso::message> m = node.try_receive()) {
        plain.take(m->bytes(), m->source());
        ++taken;
      }
      if (std::optional<iso::notice> m = node.try_iso_receive()) {
        isotach.take(m->bytes, m->source);
        ++taken;
      }
    }
    expect_bounded(node, 1024);
    const iso::node_status st = node.status();
    for (iso::node_id p = 1; p < n; ++p) {
      EXPECT_EQ(st.peers[p].sent.direct, before.peers[p].sent.direct)
          << "node 0 was to send nothing to node " << p;
      EXPECT_EQ(st.peers[p].sent.isotach, before.peers[p].sent.isotach)
          << "node 0 was to send nothing to node " << p;
      EXPECT_GT(st.peers[p].sent.credits, before.peers[p].sent.credits);
    }
  }
  node.barrier();
}

// Node 0 stops polling for a second while the others send it more than the window: they
// must wait (bounded buffers, nothing lost) and finish once it polls again.
TEST(FlowControl, ReceiverThatDoesNotPollForASecond) {
  iso::node& node = iso::test::job_node();
  const std::uint32_t n = node.count();
  node.barrier();
  constexpr std::uint32_t kMessages = 400;
  if (node.id() == 0) {
    std::this_thread::sleep_for(std::chrono::seconds(1));  // not polling: the point of the test
    checker plain(n);
    checker isotach(n);
    for (std::uint32_t i = 0; i < 2 * (n - 1) * kMessages; ++i) {
      if (i % 2 == 0) {
        iso::message m = node.receive();
        plain.take(m.bytes(), m.source());
      } else {
        iso::notice m = node.iso_receive();
        isotach.take(m.bytes, m.source);
      }
    }
    expect_bounded(node, 1024);
  } else {
    std::uint64_t most_in_flight = 0;
    for (std::uint32_t seq = 0; seq < kMessages; ++seq) {
      const std::vector<std::byte> m = make_message(node.id(), seq, size_for(seq));
      node.send(0, m);
      iso::isochron iso(node);
      iso.send(0, m);
      iso.end();
      const iso::node_status st = node.status();
      most_in_flight =
          std::max({most_in_flight, st.peers[0].messages.in_flight, st.peers[0].isotach.in_flight});
    }
    EXPECT_LE(most_in_flight, node.status().credit_window);
  }
  node.barrier();
}

// Isochrons larger than the window go whole, one at a time. Last, because it raises the
// peak buffer use the other tests check.
TEST(FlowControl, IsochronsLargerThanTheWindowGoOneAtATime) {
  iso::node& node = iso::test::job_node();
  constexpr std::size_t kVariables = 16384;  // 128 KiB of values: 8 windows
  auto big = node.allocate<std::int64_t>(kVariables, iso::placement::everywhere());
  node.barrier();
  constexpr int kRounds = 4;
  for (int round = 0; round < kRounds; ++round) {
    std::vector<std::int64_t> values(kVariables);
    for (std::size_t i = 0; i < kVariables; ++i) {
      values[i] = static_cast<std::int64_t>(node.id() * 1'000'000 + round * 100'000 + i);
    }
    iso::isochron iso(node);
    iso.write(big, 0, std::span<const std::int64_t>(values));
  }
  node.barrier();
  iso::isochron iso(node);
  iso::block_value<std::int64_t> all = iso.read(big, 0, kVariables);
  iso.end();
  // One writer's last isochron won, atomically: every value from the same (node, round).
  const std::vector<std::int64_t> got = all.get();
  ASSERT_EQ(got.size(), kVariables);
  const std::int64_t base = got[0];
  EXPECT_EQ(base % 100'000, 0);
  for (std::size_t i = 0; i < kVariables; ++i) {
    ASSERT_EQ(got[i], base + static_cast<std::int64_t>(i)) << "variable " << i;
  }
  expect_bounded(node, kVariables * 8 + 4096);
  node.barrier();
}

}  // namespace
