// The ucx transport with nodes as threads of this process, each with its own context and
// worker, addresses exchanged in memory: the transport contract (order, no loss,
// back-pressure, sizes, held packets, wake-ups, errors), once on the lanes UCX chooses and
// once on TCP only.
#include "comm/ucx/ucx_transport.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace iso::comm {
namespace {

struct lane_choice {
  std::string name;
  ucx_options options;
};

// The nodes of a test job. They are destroyed together, each in its own thread, as the
// processes of a real job end together: closing an endpoint may need the peer's progress.
class ucx_job {
 public:
  ucx_job() = default;
  explicit ucx_job(std::vector<std::unique_ptr<ucx_transport>> nodes) : nodes_(std::move(nodes)) {}
  ucx_job(ucx_job&&) = default;
  ucx_job& operator=(ucx_job&&) = default;
  ~ucx_job() {
    std::vector<std::thread> closers;
    for (auto& node : nodes_) closers.emplace_back([&node] { node.reset(); });
    for (auto& closer : closers) closer.join();
  }
  [[nodiscard]] std::size_t size() const { return nodes_.size(); }
  std::unique_ptr<ucx_transport>& operator[](std::size_t i) { return nodes_[i]; }

 private:
  std::vector<std::unique_ptr<ucx_transport>> nodes_;
};

ucx_job make_job(std::uint32_t nodes, const ucx_options& options) {
  std::vector<std::unique_ptr<ucx_transport>> job;
  std::vector<std::string> addresses;
  for (node_id rank = 0; rank < nodes; ++rank) {
    auto made = ucx_transport::create(rank, nodes, options);
    if (!made.ok()) {
      ADD_FAILURE() << made.status();
      return ucx_job(std::move(job));
    }
    addresses.push_back((*made)->worker_address());
    job.push_back(*std::move(made));
  }
  for (auto& t : job) {
    absl::Status connected = t->connect(addresses);
    if (!connected.ok()) {
      ADD_FAILURE() << connected;
      return ucx_job(std::move(job));
    }
  }
  return ucx_job(std::move(job));
}

// Whether UCX can make a context here at all; the tests skip (saying why) where it cannot.
std::string ucx_unusable_because() {
  auto probe = ucx_transport::create(0, 1);
  return probe.ok() ? std::string() : std::string(probe.status().message());
}

class UcxTransport : public testing::TestWithParam<lane_choice> {
 protected:
  void SetUp() override {
    if (std::string why = ucx_unusable_because(); !why.empty()) {
      GTEST_SKIP() << "ucx cannot make a context on this machine: " << why;
    }
  }
  ucx_job job(std::uint32_t nodes) { return make_job(nodes, GetParam().options); }
};

std::uint64_t read_u64(byte_span bytes) {
  std::uint64_t v = 0;
  std::memcpy(&v, bytes.data(), sizeof(v));
  return v;
}

// Polls `t` until `done` says so, handing packets to `on_packet`; fails after a minute.
void poll_until(transport& t, const std::function<void(received_packet&)>& on_packet,
                const std::function<bool()>& done) {
  const absl::Time deadline = absl::Now() + absl::Minutes(1);
  while (!done()) {
    ASSERT_LT(absl::Now(), deadline) << "node " << t.self() << " waited a minute for packets";
    std::size_t handled = 0;
    ASSERT_TRUE(t.poll(on_packet, handled).ok());
    if (handled == 0) t.wait(absl::Milliseconds(5));
  }
}

TEST_P(UcxTransport, ConnectsAndReportsItsLanes) {
  auto nodes = job(2);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_FALSE(nodes[0]->lanes().empty());
  EXPECT_EQ(nodes[1]->self(), 1u);
  EXPECT_EQ(nodes[1]->size(), 2u);
  if (GetParam().name == "tcp") {
    EXPECT_NE(nodes[0]->lanes().find("tcp"), std::string::npos) << nodes[0]->lanes();
  }
  EXPECT_TRUE(absl::IsFailedPrecondition(nodes[0]->connect(std::vector<std::string>(2))));
}

TEST_P(UcxTransport, ANodeSendsToItself) {
  auto nodes = job(1);
  ASSERT_EQ(nodes.size(), 1u);
  transport& t = *nodes[0];
  std::uint64_t next = 0;
  auto on_packet = [&](received_packet& p) {
    EXPECT_EQ(p.source(), 0u);
    EXPECT_EQ(read_u64(p.bytes()), next);
    ++next;
  };
  for (std::uint64_t i = 0; i < 100; ++i) {
    for (;;) {
      absl::Status s = t.send(0, std::as_bytes(std::span(&i, 1)));
      if (s.ok()) break;
      ASSERT_TRUE(absl::IsUnavailable(s)) << s;
      std::size_t handled = 0;
      ASSERT_TRUE(t.poll(on_packet, handled).ok());
    }
  }
  poll_until(t, on_packet, [&] { return next == 100; });
  EXPECT_EQ(t.counters().packets_received, 100u);
}

// Every node sends to every node (itself too) from its own thread, packets of mixed sizes
// gathered from two pieces; each receiver checks the order and contents per source.
TEST_P(UcxTransport, AllToAllIsFifoAndLossless) {
  constexpr std::uint32_t kNodes = 3;
  constexpr std::uint64_t kPerPair = 3000;
  auto nodes = job(kNodes);
  ASSERT_EQ(nodes.size(), kNodes);
  std::atomic<bool> failed{false};
  std::atomic<std::uint32_t> finished{0};
  std::vector<std::thread> threads;
  for (std::uint32_t self = 0; self < kNodes; ++self) {
    threads.emplace_back([&, self] {
      transport& t = *nodes[self];
      std::vector<std::uint64_t> next(kNodes, 0);
      std::uint64_t received = 0;
      std::vector<std::byte> body(9000);
      auto on_packet = [&](received_packet& p) {
        const byte_span b = p.bytes();
        const std::uint64_t seq = read_u64(b);
        if (seq != next[p.source()] || b.size() != 8 + seq % 9000) failed = true;
        for (std::size_t i = 8; i < b.size(); ++i) {
          if (b[i] != std::byte(static_cast<std::uint8_t>(seq + p.source()))) failed = true;
        }
        ++next[p.source()];
        ++received;
      };
      for (std::uint64_t seq = 0; seq < kPerPair; ++seq) {
        std::fill(body.begin(), body.end(), std::byte(static_cast<std::uint8_t>(seq + self)));
        const std::array<byte_span, 2> pieces{std::as_bytes(std::span(&seq, 1)),
                                              byte_span(body.data(), seq % 9000)};
        for (node_id to = 0; to < kNodes; ++to) {
          for (;;) {
            absl::Status s = t.send(to, pieces);
            if (s.ok()) break;
            if (!absl::IsUnavailable(s)) failed = true;
            std::size_t handled = 0;
            if (!t.poll(on_packet, handled).ok()) failed = true;
          }
        }
      }
      poll_until(t, on_packet, [&] { return received == kPerPair * kNodes || failed; });
      // Keep serving the peers (their rendezvous reads need this worker) until all are done.
      ++finished;
      poll_until(t, on_packet, [&] { return finished == kNodes; });
      for (std::uint32_t from = 0; from < kNodes; ++from) {
        if (next[from] != kPerPair) failed = true;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_FALSE(failed);
}

TEST_P(UcxTransport, LargePacketsArriveIntact) {
  auto nodes = job(2);
  ASSERT_EQ(nodes.size(), 2u);
  transport& a = *nodes[0];
  transport& b = *nodes[1];
  const std::size_t max = a.max_packet_size();
  ASSERT_GE(max, std::size_t{1} << 20);
  std::vector<std::byte> buffer(max);
  for (std::size_t i = 0; i < max; ++i) buffer[i] = std::byte(static_cast<std::uint8_t>(i * 7));
  constexpr int kPackets = 8;
  int sent = 0;
  int received = 0;
  poll_until(
      b,
      [&](received_packet& p) {
        ASSERT_EQ(p.bytes().size(), max);
        EXPECT_EQ(std::memcmp(p.bytes().data(), buffer.data(), max), 0);
        ++received;
      },
      [&] {
        if (sent < kPackets && a.send(1, buffer).ok()) ++sent;
        std::size_t handled = 0;
        EXPECT_TRUE(a.poll([](received_packet&) {}, handled).ok());  // the sender's progress
        return received == kPackets;
      });
  std::vector<std::byte> too_big(max + 1);
  absl::Status s = a.send(1, too_big);
  EXPECT_TRUE(absl::IsOutOfRange(s)) << s;
  EXPECT_NE(s.message().find(std::to_string(max + 1)), std::string::npos) << s;
  // A large packet may be delivered before its sender hears so; it is done with the send
  // only while both make progress. Closing before that left UCX's send request unreturned
  // (a warning at exit) and the sender's flush timing out.
  poll_until(
      b, [](received_packet&) {},
      [&] {
        std::size_t handled = 0;
        EXPECT_TRUE(a.poll([](received_packet&) {}, handled).ok());
        return a.counters().sends_in_flight == 0;
      });
  EXPECT_EQ(a.counters().sends_in_flight, 0u);
}

// A receiver that does not poll: the sender is told to wait after a bounded amount, and once
// the receiver drains, everything arrives in order.
TEST_P(UcxTransport, SlowReceiverGivesBackPressureNotLoss) {
  auto nodes = job(2);
  ASSERT_EQ(nodes.size(), 2u);
  transport& sender = *nodes[0];
  transport& receiver = *nodes[1];
  std::vector<std::byte> packet(1000);
  std::uint64_t next_to_send = 0;
  auto try_send = [&] {
    std::memcpy(packet.data(), &next_to_send, sizeof(next_to_send));
    absl::Status s = sender.send(1, packet);
    if (s.ok()) ++next_to_send;
    EXPECT_TRUE(s.ok() || absl::IsUnavailable(s)) << s;
    return s.ok();
  };
  while (try_send()) {
    ASSERT_LT(next_to_send, 100000u) << "no back-pressure after 100 MB to a receiver that sleeps";
  }
  const std::uint64_t filled = next_to_send;
  EXPECT_GT(filled, 0u);
  EXPECT_GE(sender.counters().sends_would_block, 1u);

  const std::uint64_t total = 5 * filled;
  std::uint64_t next_expected = 0;
  poll_until(
      receiver,
      [&](received_packet& p) {
        EXPECT_EQ(read_u64(p.bytes()), next_expected);
        ++next_expected;
      },
      [&] {
        if (next_to_send < total) try_send();
        std::size_t handled = 0;
        EXPECT_TRUE(sender.poll([](received_packet&) {}, handled).ok());
        return next_expected == total;
      });
  EXPECT_EQ(receiver.counters().packets_received, total);
}

// Held packets keep their bytes while later ones are released, and their space comes back to
// the sender only once released.
TEST_P(UcxTransport, HeldPacketsStayValidAndHoldBackTheSender) {
  auto nodes = job(2);
  ASSERT_EQ(nodes.size(), 2u);
  transport& a = *nodes[0];
  transport& b = *nodes[1];
  std::vector<std::byte> packet(64 * 1024);
  std::uint64_t value = 0;
  auto send_next = [&] {
    std::fill(packet.begin(), packet.end(), std::byte(static_cast<std::uint8_t>(value)));
    std::memcpy(packet.data(), &value, sizeof(value));
    if (!a.send(1, packet).ok()) return false;
    ++value;
    return true;
  };
  while (send_next()) {
  }
  const std::uint64_t in_flight = value;
  std::vector<held_packet> held;
  poll_until(
      b, [&](received_packet& p) { held.push_back(p.hold()); },
      [&] {
        std::size_t handled = 0;
        EXPECT_TRUE(a.poll([](received_packet&) {}, handled).ok());
        return held.size() == in_flight;
      });
  for (int i = 0; i < 100; ++i) {
    std::size_t handled = 0;
    ASSERT_TRUE(b.poll([](received_packet&) {}, handled).ok());
  }
  EXPECT_FALSE(send_next()) << "nothing may be sent while every packet is held";
  for (std::size_t i = held.size(); i-- > 1;) held[i].release();
  ASSERT_EQ(held[0].bytes().size(), packet.size());
  EXPECT_EQ(read_u64(held[0].bytes()), 0u);
  EXPECT_EQ(held[0].bytes().back(), std::byte{0})
      << "a held packet's bytes are intact after later ones were released";
  held[0].release();
  // The released space comes back as credit: the sender can go on.
  const absl::Time deadline = absl::Now() + absl::Minutes(1);
  while (!send_next()) {
    ASSERT_LT(absl::Now(), deadline);
    std::size_t handled = 0;
    ASSERT_TRUE(b.poll([](received_packet&) {}, handled).ok());
  }
  bool arrived = false;
  poll_until(
      b, [&](received_packet& p) { arrived = read_u64(p.bytes()) == in_flight; },
      [&] {
        std::size_t handled = 0;
        EXPECT_TRUE(a.poll([](received_packet&) {}, handled).ok());
        return arrived;
      });
}

TEST_P(UcxTransport, WaitReturnsWhenAPacketArrives) {
  auto nodes = job(2);
  ASSERT_EQ(nodes.size(), 2u);
  transport& a = *nodes[0];
  transport& b = *nodes[1];
  std::atomic<bool> stop{false};
  std::thread sender([&] {
    const std::uint32_t hello = 42;
    EXPECT_TRUE(a.send(1, std::as_bytes(std::span(&hello, 1))).ok());
    // The sender's worker must make progress for TCP to push the packet out.
    while (!stop) {
      std::size_t handled = 0;
      EXPECT_TRUE(a.poll([](received_packet&) {}, handled).ok());
      a.wait(absl::Milliseconds(1));
    }
  });
  std::size_t handled = 0;
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (handled == 0 && absl::Now() < deadline) {
    b.wait(absl::Seconds(5));
    absl::Status polled = b.poll([](received_packet&) {}, handled);
    EXPECT_TRUE(polled.ok()) << polled;
    if (!polled.ok()) break;
  }
  stop = true;
  sender.join();
  EXPECT_EQ(handled, 1u);
}

// A large packet goes by rendezvous: its bytes are fetched only once the receiver has started
// the receive, which then needs the receiver's own progress (no event from the wire may
// follow). A receiver that only waits and polls must still get it without anyone's help. A
// watchdog counts the times it had to wake the receiver because nothing came for a long
// while: a wait() that armed its worker with a started receive not yet progressed would sleep
// until then. (With UCX 1.13 this passed without that progress step too, on both lanes, so it
// guards the rule rather than a failure seen on that version.)
TEST_P(UcxTransport, WaitingAloneCompletesALargePacket) {
  auto nodes = job(2);
  ASSERT_EQ(nodes.size(), 2u);
  transport& a = *nodes[0];
  transport& b = *nodes[1];
  constexpr int kPackets = 4;
  std::vector<std::byte> big(a.max_packet_size(), std::byte{0x5a});
  std::atomic<bool> stop{false};
  std::atomic<bool> sender_done{false};
  std::thread sender([&] {
    for (int sent = 0; sent < kPackets && !stop;) {
      if (a.send(1, big).ok()) ++sent;
      std::size_t handled = 0;
      EXPECT_TRUE(a.poll([](received_packet&) {}, handled).ok());
    }
    // The sender keeps its worker going (its part of the rendezvous) but sends nothing more,
    // until it has heard that its last packet was taken.
    const absl::Time give_up = absl::Now() + absl::Minutes(3);
    while ((!stop || a.counters().sends_in_flight != 0) && absl::Now() < give_up) {
      std::size_t handled = 0;
      EXPECT_TRUE(a.poll([](received_packet&) {}, handled).ok());
      a.wait(absl::Milliseconds(1));
    }
    sender_done = true;
  });
  std::atomic<int> received{0};
  std::atomic<int> wakes_needed{0};
  std::thread watchdog([&] {
    int seen = 0;
    absl::Time last_progress = absl::Now();
    while (!stop) {
      absl::SleepFor(absl::Milliseconds(50));
      if (received != seen) {
        seen = received;
        last_progress = absl::Now();
      } else if (absl::Now() - last_progress > absl::Seconds(20)) {
        ++wakes_needed;  // far beyond any delay of the wire, even on a loaded machine
        b.wake();
        last_progress = absl::Now();
      }
    }
  });
  const absl::Time deadline = absl::Now() + absl::Minutes(3);
  while (received < kPackets && absl::Now() < deadline) {
    b.wait(absl::InfiniteDuration());
    std::size_t handled = 0;
    const absl::Status polled = b.poll(
        [&](received_packet& p) {
          EXPECT_EQ(p.bytes().size(), big.size());
          ++received;
        },
        handled);
    EXPECT_TRUE(polled.ok()) << polled;
    if (!polled.ok()) break;  // the threads are stopped and joined below either way
  }
  stop = true;
  while (!sender_done) {  // the receiver's part of finishing the sends
    std::size_t handled = 0;
    EXPECT_TRUE(b.poll([](received_packet&) {}, handled).ok());
    b.wait(absl::Milliseconds(1));
  }
  sender.join();
  watchdog.join();
  EXPECT_EQ(received, kPackets);
  EXPECT_EQ(a.counters().sends_in_flight, 0u);
  EXPECT_EQ(wakes_needed, 0) << "the receiver slept with a receive it had to progress itself";
}

TEST_P(UcxTransport, WakeEndsASleepFromAnotherThread) {
  auto nodes = job(2);
  ASSERT_EQ(nodes.size(), 2u);
  std::atomic<bool> flag{false};
  std::thread waker([&] {
    flag = true;
    nodes[1]->wake();
  });
  // The flag is the caller's own condition; wait() may return before or after it is set,
  // but never sleeps through the wake-up: a lost one would take the full ten minutes.
  const absl::Time start = absl::Now();
  while (!flag) nodes[1]->wait(absl::Minutes(10), [&] { return flag.load(); });
  waker.join();
  EXPECT_LT(absl::Now() - start, absl::Minutes(5));
  // A wake() before the wait makes the next wait return too.
  nodes[1]->wake();
  nodes[1]->wait(absl::Minutes(10));
  EXPECT_LT(absl::Now() - start, absl::Minutes(5));
}

INSTANTIATE_TEST_SUITE_P(Lanes, UcxTransport,
                         testing::Values(lane_choice{"default", {}},
                                         lane_choice{"tcp", {{{"TLS", "tcp"}}}}),
                         [](const testing::TestParamInfo<lane_choice>& param_info) {
                           return param_info.param.name;
                         });

class UcxTransportErrors : public testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = ucx_unusable_because(); !why.empty()) {
      GTEST_SKIP() << "ucx cannot make a context on this machine: " << why;
    }
  }
};

TEST_F(UcxTransportErrors, CreateRejectsABadShapeOrSetting) {
  EXPECT_TRUE(absl::IsInvalidArgument(ucx_transport::create(2, 2).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(ucx_transport::create(0, 0).status()));
  auto unknown = ucx_transport::create(0, 1, {{{"NO_SUCH_SETTING", "1"}}});
  EXPECT_TRUE(absl::IsInvalidArgument(unknown.status())) << unknown.status();
  EXPECT_NE(unknown.status().message().find("UCX_NO_SUCH_SETTING"), std::string::npos)
      << unknown.status();
  auto bad_value = ucx_transport::create(0, 1, {{{"RNDV_THRESH", "lots"}}});
  EXPECT_TRUE(absl::IsInvalidArgument(bad_value.status())) << bad_value.status();
  EXPECT_NE(bad_value.status().message().find("UCX_RNDV_THRESH=lots"), std::string::npos)
      << bad_value.status();
}

TEST_F(UcxTransportErrors, ConnectRejectsBadAddresses) {
  auto a = ucx_transport::create(0, 2);
  auto b = ucx_transport::create(1, 2);
  ASSERT_TRUE(a.ok() && b.ok());
  const std::string a_address = (*a)->worker_address();
  const std::string b_address = (*b)->worker_address();

  absl::Status wrong_count = (*a)->connect(std::vector<std::string>{a_address});
  EXPECT_TRUE(absl::IsInvalidArgument(wrong_count)) << wrong_count;
  EXPECT_NE(wrong_count.message().find("1 addresses"), std::string::npos) << wrong_count;

  std::string garbage(b_address.size(), 'x');
  absl::Status bad = (*a)->connect(std::vector<std::string>{a_address, garbage});
  EXPECT_TRUE(absl::IsInvalidArgument(bad)) << bad;
  EXPECT_NE(bad.message().find("node 1"), std::string::npos) << bad;

  std::string damaged = b_address;
  damaged.back() = static_cast<char>(damaged.back() ^ 0x5a);
  bad = (*a)->connect(std::vector<std::string>{a_address, damaged});
  EXPECT_TRUE(absl::IsInvalidArgument(bad)) << bad;
  EXPECT_NE(bad.message().find("node 1"), std::string::npos) << bad;

  bad = (*a)->connect(std::vector<std::string>{b_address, a_address});
  EXPECT_TRUE(absl::IsInvalidArgument(bad)) << bad;
  EXPECT_NE(bad.message().find("node 1's"), std::string::npos) << bad;

  bad = (*a)->connect(std::vector<std::string>{a_address, b_address.substr(0, 5)});
  EXPECT_TRUE(absl::IsInvalidArgument(bad)) << bad;

  // Nothing was half made: the right addresses still work.
  ASSERT_TRUE((*a)->connect(std::vector<std::string>{a_address, b_address}).ok());
}

TEST_F(UcxTransportErrors, SendRejectsUnknownNodesAndComesAfterConnect) {
  auto a = ucx_transport::create(0, 2);
  ASSERT_TRUE(a.ok());
  const std::byte one{1};
  absl::Status early = (*a)->send(1, byte_span(&one, 1));
  EXPECT_TRUE(absl::IsFailedPrecondition(early)) << early;
  absl::Status bad_node = (*a)->send(2, byte_span(&one, 1));
  EXPECT_TRUE(absl::IsInvalidArgument(bad_node)) << bad_node;
  EXPECT_NE(bad_node.message().find("node 2"), std::string::npos) << bad_node;
}

}  // namespace
}  // namespace iso::comm
