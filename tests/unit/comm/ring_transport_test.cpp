// The ring transport with nodes as threads (inproc backend): order, no loss, back-pressure,
// sizes, errors, held packets, and the nodes' idle announcements.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "comm/inproc.hpp"

namespace iso::comm {
namespace {

struct stamp {
  std::uint32_t source;
  std::uint32_t sequence;
};

std::vector<std::unique_ptr<transport>> fabric(std::uint32_t nodes, std::size_t capacity) {
  auto made = make_inproc_fabric(nodes, {.ring_capacity = capacity, .shuffle_poll_order = true});
  EXPECT_TRUE(made.ok()) << made.status();
  return *std::move(made);
}

// Sends, polling (and recording) our own inbound while the destination is full.
void send_polling(transport& t, node_id to, byte_span bytes,
                  const std::function<void(received_packet&)>& on_packet) {
  for (;;) {
    absl::Status s = t.send(to, bytes);
    if (s.ok()) return;
    ASSERT_TRUE(absl::IsUnavailable(s)) << s;
    std::size_t handled = 0;
    ASSERT_TRUE(t.poll(on_packet, handled).ok());
  }
}

TEST(RingTransport, AllToAllIsFifoAndLossless) {
  constexpr std::uint32_t kNodes = 4;
  constexpr std::uint32_t kPerPair = 20000;
  auto nodes = fabric(kNodes, 4096);  // small rings: plenty of back-pressure
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  for (std::uint32_t self = 0; self < kNodes; ++self) {
    threads.emplace_back([&, self] {
      transport& t = *nodes[self];
      std::vector<std::uint32_t> next(kNodes, 0);
      std::uint64_t received = 0;
      auto on_packet = [&](received_packet& p) {
        stamp s;
        if (p.bytes().size() != sizeof(s)) failed = true;
        std::memcpy(&s, p.bytes().data(), sizeof(s));
        if (s.source != p.source() || s.sequence != next[p.source()]) failed = true;
        ++next[p.source()];
        ++received;
      };
      for (std::uint32_t seq = 0; seq < kPerPair; ++seq) {
        for (std::uint32_t to = 0; to < kNodes; ++to) {
          const stamp s{self, seq};
          send_polling(t, to, std::as_bytes(std::span(&s, 1)), on_packet);
        }
      }
      while (received < std::uint64_t{kPerPair} * kNodes) {
        std::size_t handled = 0;
        if (!t.poll(on_packet, handled).ok()) failed = true;
        if (handled == 0) t.wait(absl::Milliseconds(10));
      }
      for (std::uint32_t from = 0; from < kNodes; ++from) {
        if (next[from] != kPerPair) failed = true;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_FALSE(failed);
}

// A receiver that does not poll: the sender is told to wait, memory stays at the ring's
// size, and once the receiver drains everything arrives in order.
TEST(RingTransport, SlowReceiverGivesBackPressureNotLoss) {
  auto nodes = fabric(2, 1024);
  transport& sender = *nodes[0];
  transport& receiver = *nodes[1];
  std::uint64_t next_to_send = 0;
  while (sender.send(1, std::as_bytes(std::span(&next_to_send, 1))).ok()) ++next_to_send;
  const std::uint64_t filled = next_to_send;
  EXPECT_GT(filled, 0u);
  EXPECT_LE(filled * 16u, 1024u) << "a 1 KiB ring cannot hold more than 64 records of 16 bytes";
  EXPECT_GE(sender.counters().sends_would_block, 1u);

  // Now the receiver drains while the sender keeps going: every value arrives, in order.
  const std::uint64_t total = 50 * filled;
  std::uint64_t next_expected = 0;
  while (next_expected < total) {
    if (next_to_send < total && sender.send(1, std::as_bytes(std::span(&next_to_send, 1))).ok()) {
      ++next_to_send;
    }
    std::size_t handled = 0;
    ASSERT_TRUE(receiver
                    .poll(
                        [&](received_packet& p) {
                          std::uint64_t v;
                          std::memcpy(&v, p.bytes().data(), sizeof(v));
                          EXPECT_EQ(v, next_expected);
                          ++next_expected;
                        },
                        handled, 3)
                    .ok());
  }
  EXPECT_EQ(receiver.counters().packets_received, total);
}

TEST(RingTransport, EverySizeUpToTheMaximumArrivesIntact) {
  auto nodes = fabric(2, 16384);
  transport& a = *nodes[0];
  transport& b = *nodes[1];
  const std::size_t max = a.max_packet_size();
  std::vector<std::byte> buffer(max);
  for (std::size_t i = 0; i < max; ++i) buffer[i] = std::byte(static_cast<std::uint8_t>(i * 7));
  std::size_t next_expected = 0;
  // Receives what is waiting, checking that each packet is the next size, intact.
  auto receive = [&] {
    std::size_t handled = 0;
    EXPECT_TRUE(b.poll(
                     [&](received_packet& p) {
                       ASSERT_EQ(p.bytes().size(), next_expected);
                       ASSERT_EQ(std::memcmp(p.bytes().data(), buffer.data(), next_expected), 0);
                       ++next_expected;
                     },
                     handled)
                    .ok());
    return handled;
  };
  for (std::size_t size = 0; size <= max; ++size) {
    while (!a.send(1, byte_span(buffer.data(), size)).ok()) receive();
  }
  while (next_expected <= max) ASSERT_GT(receive(), 0u);
}

TEST(RingTransport, RejectsUnknownNodeAndOversizePackets) {
  auto nodes = fabric(2, 1024);
  const std::byte one{1};
  absl::Status bad_node = nodes[0]->send(2, byte_span(&one, 1));
  EXPECT_TRUE(absl::IsInvalidArgument(bad_node)) << bad_node;
  EXPECT_NE(bad_node.message().find("node 2"), std::string::npos) << bad_node;
  std::vector<std::byte> big(nodes[0]->max_packet_size() + 1);
  absl::Status too_big = nodes[0]->send(1, big);
  EXPECT_TRUE(absl::IsOutOfRange(too_big)) << too_big;
  EXPECT_NE(too_big.message().find(std::to_string(big.size())), std::string::npos) << too_big;
}

// Held packets keep their bytes (no copy) and free space only when released, in any order.
TEST(RingTransport, HeldPacketsStayValidAndReleaseOutOfOrder) {
  auto nodes = fabric(2, 256);
  transport& a = *nodes[0];
  transport& b = *nodes[1];
  std::vector<held_packet> held;
  std::uint64_t value = 0;
  while (a.send(1, std::as_bytes(std::span(&value, 1))).ok()) ++value;
  const std::uint64_t in_ring = value;
  std::size_t handled = 0;
  ASSERT_TRUE(b.poll([&](received_packet& p) { held.push_back(p.hold()); }, handled).ok());
  ASSERT_EQ(held.size(), in_ring);
  EXPECT_FALSE(a.send(1, std::as_bytes(std::span(&value, 1))).ok())
      << "nothing is freed while every packet is held";
  // Release the newest first: no space may be freed until the oldest goes too.
  for (std::size_t i = held.size(); i-- > 1;) held[i].release();
  EXPECT_FALSE(a.send(1, std::as_bytes(std::span(&value, 1))).ok());
  std::uint64_t first;
  std::memcpy(&first, held[0].bytes().data(), sizeof(first));
  EXPECT_EQ(first, 0u) << "a held packet's bytes are intact after later ones were released";
  held[0].release();
  EXPECT_TRUE(a.send(1, std::as_bytes(std::span(&value, 1))).ok());
}

TEST(RingTransport, WaitReturnsWhenAPacketArrives) {
  auto nodes = fabric(2, 1024);
  std::thread sender([&] {
    const std::uint32_t hello = 42;
    ASSERT_TRUE(nodes[0]->send(1, std::as_bytes(std::span(&hello, 1))).ok());
  });
  std::size_t handled = 0;
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (handled == 0 && absl::Now() < deadline) {
    nodes[1]->wait(absl::Seconds(5));
    ASSERT_TRUE(nodes[1]->poll([](received_packet&) {}, handled).ok());
  }
  sender.join();
  EXPECT_EQ(handled, 1u);
}

// What the nodes of a host read to tell whether one of them may poll on a core the others
// leave free (runtime's waiter_policy::spare_cores).
TEST(RingTransport, EachNodeCountsTheOthersThatHaveNotAnnouncedTheyAreIdle) {
  constexpr std::uint32_t kAll = 3;
  auto nodes = fabric(3, 1024);
  for (const auto& node : nodes) EXPECT_EQ(node->busy_neighbours(kAll), 2u);
  // Counting stops once it has found enough.
  EXPECT_EQ(nodes[0]->busy_neighbours(1), 1u);
  nodes[1]->announce_idle(true);
  EXPECT_EQ(nodes[0]->busy_neighbours(kAll), 1u);
  EXPECT_EQ(nodes[1]->busy_neighbours(kAll), 2u);  // its own announcement is not counted
  EXPECT_EQ(nodes[2]->busy_neighbours(kAll), 1u);
  nodes[0]->announce_idle(true);
  nodes[2]->announce_idle(true);
  EXPECT_EQ(nodes[1]->busy_neighbours(kAll), 0u);
  nodes[1]->announce_idle(false);
  EXPECT_EQ(nodes[0]->busy_neighbours(kAll), 1u);
  EXPECT_EQ(nodes[1]->busy_neighbours(kAll), 0u);
}

TEST(RingTransport, RejectsBadFabricShapes) {
  EXPECT_TRUE(absl::IsInvalidArgument(make_inproc_fabric(0, {}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(make_inproc_fabric(2, {.ring_capacity = 1000}).status()));
}

}  // namespace
}  // namespace iso::comm
