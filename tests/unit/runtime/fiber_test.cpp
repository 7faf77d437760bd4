// Fibers (iso/fiber.hpp): many per node, each waiting for what it needs while the others run;
// a node whose fibers all wait sleeps; isochrons belong to one fiber at a time; exceptions
// and fibers left running fail the node with errors that name the fiber.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "iso/iso.hpp"
#include "runtime/node_state.hpp"
#include "tests/support/inproc_job.hpp"
#include "tests/support/test_support.hpp"

namespace {

using iso::test::expect_error;
using iso::test::run_inproc;

class Fibers : public iso::test::nic_mode_test {};
INSTANTIATE_TEST_SUITE_P(NicModes, Fibers, iso::test::both_nic_modes(), iso::test::nic_mode_name);

// A thousand fibers on node 0 each read a variable held by node 1 only: every read waits
// for node 1's answer through the NICs, so each fiber yields at its get() and the next one starts.
TEST_P(Fibers, AThousandFibersEachWaitForARemoteRead) {
  constexpr int kFibers = 1000;
  std::atomic<int> wrong{0};
  std::atomic<int> most_waiting{0};
  std::atomic<int> finished{0};
  iso::options o = opts();
  o.direct_reads = false;  // node 0 could read node 1's copy in place: every read takes the NICs
  const int status = run_inproc(2, o, [&](iso::node& node) {
    auto xs = node.allocate<std::int64_t>(kFibers, iso::placement::on(1));
    if (node.id() == 1) {
      iso::isochron iso(node);
      for (int i = 0; i < kFibers; ++i) iso.write(xs[i], std::int64_t{3} * i + 1);
    }
    node.barrier();
    if (node.id() == 0) {
      int waiting = 0;
      std::vector<iso::fiber> fibers;
      fibers.reserve(kFibers);
      for (int i = 0; i < kFibers; ++i) {
        fibers.push_back(
            iso::spawn(node,
                       [&, i] {
                         iso::isochron iso(node);
                         iso::value<std::int64_t> v = iso.read(xs[i]);
                         iso.end();
                         ++waiting;
                         if (waiting > most_waiting) most_waiting = waiting;
                         if (v.get() != std::int64_t{3} * i + 1) ++wrong;
                         --waiting;
                         ++finished;
                       },
                       {.name = "reader " + std::to_string(i), .stack_bytes = 64 * 1024}));
      }
      EXPECT_EQ(iso::live_fibers(node), static_cast<std::size_t>(kFibers));
      for (iso::fiber& f : fibers) f.join();
      EXPECT_EQ(iso::live_fibers(node), 0u);
    }
    node.barrier();
  });
  ASSERT_EQ(status, 0);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(finished.load(), kFibers);
  // Fibers take turns: each one that waits hands the thread to the next, which has not
  // started yet, so those that wait all wait together before the first answer is taken
  // (a wait that blocked the thread would keep this at 1). Not every read waits: one may be
  // served at once, from the owner's window or by an answer its own isochron's end took in
  // (with a NIC thread under ThreadSanitizer, 999 of 1000 waited together).
  EXPECT_GE(most_waiting.load(), kFibers / 2);
}

// Fibers on two nodes play ping-pong through shared variables: fiber f of node 0 makes its
// ball odd, fiber f of node 1 makes it even again, each waiting (yielding) for its turn.
TEST_P(Fibers, PingPongBetweenFibersOfTwoNodes) {
  constexpr int kPairs = 4;
  constexpr std::int64_t kRounds = 40;
  std::atomic<int> wrong{0};
  const int status = run_inproc(2, opts(), [&](iso::node& node) {
    auto balls = node.allocate<std::int64_t>(kPairs);
    node.barrier();
    std::vector<iso::fiber> players;
    players.reserve(kPairs);
    for (int f = 0; f < kPairs; ++f) {
      players.push_back(iso::spawn(node, [&, f] {
        const std::int64_t parity = node.id() == 0 ? 0 : 1;  // whose turn: by the ball's parity
        for (std::int64_t hit = 0; hit < kRounds; ++hit) {
          std::int64_t seen = 0;
          while (true) {
            seen = iso::test::read_alone(node, balls[f]);
            if (seen % 2 == parity) break;
            iso::yield(node);
          }
          if (seen != 2 * hit + parity) ++wrong;
          iso::isochron iso(node);
          iso.write(balls[f], seen + 1);
        }
      }));
    }
    for (iso::fiber& p : players) p.join();
    node.barrier();
    for (int f = 0; f < kPairs; ++f) {
      if (iso::test::read_alone(node, balls[f]) != 2 * kRounds) ++wrong;
    }
  });
  ASSERT_EQ(status, 0);
  EXPECT_EQ(wrong.load(), 0);
}

// Node 0's fibers all wait for messages that node 1 sends only once node 0 has slept on its
// doorbell a few times: a node whose fibers all wait sleeps, and its fibers are not switched
// round and round meanwhile. No timing: node 1 watches node 0's count of sleeps.
TEST(FiberScheduling, ANodeWhoseFibersAllWaitSleeps) {
  constexpr int kWaiters = 8;
  constexpr std::uint64_t kSleeps = 3;
  iso::options opts;
  opts.wait = iso::wait_mode::block;
  opts.barrier_timeout = std::chrono::seconds(60);
  std::atomic<iso::runtime::event_loop*> loop0{nullptr};
  std::atomic<std::uint64_t> sleeps_seen{0};
  std::atomic<std::uint64_t> switches_while_waiting{0};
  std::atomic<int> received{0};
  const int status = run_inproc(2, opts, [&](iso::node& node) {
    iso::detail::node_state& state = iso::detail::node_state::of(node);
    if (node.id() == 0) loop0 = &state.loop();
    node.barrier();
    if (node.id() == 0) {
      std::vector<iso::fiber> waiters;
      waiters.reserve(kWaiters);
      for (int i = 0; i < kWaiters; ++i) {
        waiters.push_back(iso::spawn(node, [&] {
          const iso::message m = node.receive();
          if (m.source() == 1 && m.bytes().size() == 1) ++received;
        }));
      }
      const std::uint64_t switches_before = state.fibers().switches();
      for (iso::fiber& w : waiters) w.join();
      switches_while_waiting = state.fibers().switches() - switches_before;
    } else {
      const std::uint64_t start = loop0.load()->sleeps();
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (loop0.load()->sleeps() - start < kSleeps &&
             std::chrono::steady_clock::now() < give_up) {
        node.poll();
        std::this_thread::yield();
      }
      sleeps_seen = loop0.load()->sleeps() - start;
      const std::byte one{1};
      for (int i = 0; i < kWaiters; ++i) node.send(0, std::span(&one, 1));
    }
    node.barrier();
  });
  ASSERT_EQ(status, 0);
  EXPECT_EQ(received.load(), kWaiters);
  EXPECT_GE(sleeps_seen.load(), kSleeps) << "node 0 never slept while all its fibers waited";
  // Each waiter starts once, and runs again once for its message; main waits in join. A
  // scheduler that switched while nothing could run would count thousands.
  EXPECT_LE(switches_while_waiting.load(), std::uint64_t{6} * kWaiters)
      << "fibers were switched while none could go on";
}

// A wait that sleeps outside the fiber switch (a same-host read on its owner's bell, the
// wait for an unpark) would hold every other fiber, so it does not sleep while any lives.
// Every node has a fiber switch; until it spawns a fiber, such waits may sleep. They once
// never did, on any node.
TEST(FiberScheduling, OnlySpawnedFibersKeepAWaitFromSleeping) {
  bool before = true;
  bool inside = false;
  bool after = true;
  const int status = run_inproc(1, iso::options{}, [&](iso::node& node) {
    const iso::runtime::event_loop& loop = iso::detail::node_state::of(node).loop();
    before = loop.runs_fibers();
    iso::fiber f = iso::spawn(node, [&] { inside = loop.runs_fibers(); });
    f.join();
    after = loop.runs_fibers();
  });
  ASSERT_EQ(status, 0);
  EXPECT_FALSE(before) << "a node without spawned fibers counted as running fibers";
  EXPECT_TRUE(inside);
  EXPECT_FALSE(after) << "an ended fiber still counted";
}

// An isochron belongs to the fiber that opened it: another fiber that opens one meanwhile
// waits until the first has ended (it does not fail, and the two do not mix).
TEST_P(Fibers, AnotherFibersIsochronWaitsForTheOpenOne) {
  std::atomic<int> wrong{0};
  iso::options o = opts();
  o.direct_reads = false;  // the remote read goes through the NICs, so get() waits for it
  const int status = run_inproc(2, o, [&](iso::node& node) {
    auto remote = node.allocate<std::int64_t>(1, iso::placement::on(1))[0];
    auto x = node.allocate<std::int64_t>(1)[0];
    node.barrier();
    if (node.id() == 0) {
      bool first_ended = false;
      iso::fiber first = iso::spawn(
          node,
          [&] {
            iso::value<std::int64_t> earlier;
            {
              iso::isochron iso(node);
              earlier = iso.read(remote);
            }
            iso::isochron iso(node);
            iso.write(x, 1);
            (void)earlier.get();  // a read of an ended isochron: may wait, with this one open
            expect_error(iso::error_code::failed_precondition, "inside an open isochron",
                         [&] { iso::yield(node); });
            iso.end();
            first_ended = true;
          },
          {.name = "first"});
      iso::fiber second =
          iso::spawn(node,
                     [&] {
                       iso::isochron iso(node);  // waits for "first" to end its isochron
                       if (!first_ended) ++wrong;
                       iso.write(x, 2);
                     },
                     {.name = "second"});
      first.join();
      second.join();
    }
    node.barrier();
    if (iso::test::read_alone(node, x) != 2) ++wrong;
  });
  ASSERT_EQ(status, 0);
  EXPECT_EQ(wrong.load(), 0);
}

// A wait's condition may act (take a message, submit a batch): once it held, it is not
// evaluated again, with or without other fibers on the node.
TEST(FiberScheduling, AConditionThatHeldIsNotEvaluatedAgain) {
  int alone = 0;
  int beside = 0;
  const int status = run_inproc(1, iso::options{}, [&](iso::node& node) {
    iso::runtime::event_loop& loop = iso::detail::node_state::of(node).loop();
    EXPECT_TRUE(loop.wait_for([&] { return ++alone >= 1; }).ok());
    EXPECT_TRUE(loop.wait_for([&] { return ++alone >= 3; }).ok());
    iso::fiber other = iso::spawn(node, [&] {
      for (int i = 0; i < 5; ++i) iso::yield(node);
    });
    EXPECT_TRUE(loop.wait_for([&] { return ++beside >= 4; }).ok());
    other.join();
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(alone, 3);
  EXPECT_EQ(beside, 4);
}

TEST(FiberErrors, JoinInsideTheCallersOwnIsochronIsRefused) {
  const int status = run_inproc(1, iso::options{}, [&](iso::node& node) {
    iso::fiber f = iso::spawn(node, [] {});
    {
      iso::isochron iso(node);
      expect_error(iso::error_code::failed_precondition, "join() inside an open isochron",
                   [&] { f.join(); });
    }
    EXPECT_TRUE(f.joinable());
    f.join();
    EXPECT_FALSE(f.joinable());
    expect_error(iso::error_code::failed_precondition, "names no fiber", [&] { f.join(); });
    expect_error(iso::error_code::invalid_argument, "at least",
                 [&] { (void)iso::spawn(node, [] {}, {.name = "tiny", .stack_bytes = 1024}); });
    // Rounded up to whole pages, these sizes wrapped around to a stack of a page or two.
    for (const std::size_t huge : {SIZE_MAX, SIZE_MAX - 4095, SIZE_MAX - 65535}) {
      expect_error(iso::error_code::invalid_argument, "at most",
                   [&] { (void)iso::spawn(node, [] {}, {.name = "huge", .stack_bytes = huge}); });
    }
  });
  EXPECT_EQ(status, 0);
}

TEST(FiberErrors, AFiberJoiningItselfIsRefused) {
  const int status = run_inproc(1, iso::options{}, [&](iso::node& node) {
    iso::fiber self;
    iso::fiber f = iso::spawn(node,
                              [&] {
                                expect_error(iso::error_code::failed_precondition, "joins itself",
                                             [&] { self.join(); });
                              },
                              {.name = "narcissus"});
    self = std::move(f);
    self.join();
  });
  EXPECT_EQ(status, 0);
}

// An exception that leaves a fiber fails the node with an error naming the fiber; join()
// reports it, and so does iso::run.
TEST(FiberErrors, AnExceptionLeavingAFiberFailsTheNodeNamingIt) {
  iso::test::allow_log_lines_in_this_test();
  std::string joined;
  testing::internal::CaptureStderr();
  const int status = run_inproc(1, iso::options{}, [&](iso::node& node) {
    iso::fiber f = iso::spawn(node, [] { throw std::runtime_error("boom"); }, {.name = "bad"});
    try {
      f.join();
    } catch (const iso::error& e) {
      joined = e.what();
    }
  });
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(status, 1);
  EXPECT_NE(joined.find("fiber 'bad' on node 0 ended with an exception: boom"), std::string::npos)
      << joined;
  EXPECT_NE(log.find("fiber 'bad'"), std::string::npos) << log;
}

// A body that returns while fibers it spawned still wait fails its node, naming them,
// instead of hanging or cutting them off silently; the other node learns of the failure.
TEST(FiberErrors, FibersStillRunningWhenTheBodyReturnsFailTheNode) {
  iso::test::allow_log_lines_in_this_test();
  iso::options opts;
  opts.barrier_timeout = std::chrono::seconds(60);
  testing::internal::CaptureStderr();
  const int status = run_inproc(2, opts, [&](iso::node& node) {
    if (node.id() == 0) {
      iso::fiber stuck = iso::spawn(node, [&] { (void)node.receive(); }, {.name = "stuck"});
      iso::yield(node);  // it starts, and waits for a message that never comes
    }
  });
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(status, 1);
  EXPECT_NE(log.find("node 0: the body returned while 1 fiber(s) still run: 'stuck' (waiting)"),
            std::string::npos)
      << log;
}

}  // namespace
