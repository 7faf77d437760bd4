// Collective calls made wrongly (retried after a time-out, made where the node may not wait,
// made once more on one node than on the others, made by two fibers at once) must never let
// a barrier pass without every node: the nodes after it would read values from before it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "iso/iso.hpp"
#include "tests/support/inproc_job.hpp"
#include "tests/support/test_support.hpp"

namespace {

using iso::error_code;
using iso::test::expect_error;
using iso::test::run_inproc;

std::int64_t read_alone(iso::node& node, iso::shared_var<std::int64_t> v) {
  iso::value<std::int64_t> value;
  {
    iso::isochron iso(node);
    value = iso.read(v);
  }
  return value.get();
}

void write_alone(iso::node& node, iso::shared_var<std::int64_t> v, std::int64_t value) {
  iso::isochron iso(node);
  iso.write(v, value);
}

const std::byte kGo{1};

// Node 1's barrier runs out of time while node 0 waits for its message; node 1 then calls
// barrier() again until it passes. Its retries wait for the barrier it arrived at, so it
// passes only with node 0, after node 0's write.
TEST(CollectiveMistakes, ABarrierCalledAgainAfterItRanOutOfTimeWaitsForTheSameOne) {
  iso::options opts;
  opts.barrier_timeout = std::chrono::seconds(2);
  std::atomic<int> timeouts{0};
  std::atomic<std::int64_t> seen{-1};
  const int status = run_inproc(2, opts, [&](iso::node& node) {
    auto x = node.allocate<std::int64_t>(1, iso::placement::on(0));
    if (node.id() == 0) {
      (void)node.receive();  // node 1's first barrier has run out of time
      write_alone(node, x[0], 42);
      node.barrier();
      return;
    }
    expect_error(error_code::deadline_exceeded, "calling barrier() again waits for them again",
                 [&] { node.barrier(); });
    ++timeouts;
    node.send(0, std::span(&kGo, 1));
    for (;;) {
      try {
        node.barrier();
        break;
      } catch (const iso::error& e) {
        ASSERT_EQ(e.code(), error_code::deadline_exceeded) << e.what();
        ++timeouts;
      }
    }
    seen = read_alone(node, x[0]);
  });
  EXPECT_EQ(status, 0);
  EXPECT_GE(timeouts.load(), 1);
  EXPECT_EQ(seen.load(), 42);
}

// After a barrier ran out of time, no other collective call and no isochron can follow on
// that node until the barrier is called again: the node's arrival stands where the others
// will meet it. The refused allocation took nothing: the next one is at the same address on
// both nodes.
TEST(CollectiveMistakes, OnlyTheBarrierMayFollowOneThatRanOutOfTime) {
  iso::options opts;
  opts.barrier_timeout = std::chrono::seconds(2);
  std::atomic<int> refused{0};
  std::vector<std::uint64_t> where(2);
  const int status = run_inproc(2, opts, [&](iso::node& node) {
    auto x = node.allocate<std::int64_t>(1);
    if (node.id() == 0) {
      (void)node.receive();
      node.barrier();
    } else {
      expect_error(error_code::deadline_exceeded, "did not arrive", [&] { node.barrier(); });
      if (expect_error(error_code::failed_precondition,
                       "this node's barrier() ran out of time, and its arrival there stands",
                       [&] { (void)node.allocate<std::int64_t>(1); })) {
        ++refused;
      }
      if (expect_error(error_code::failed_precondition, "call it again first",
                       [&] { write_alone(node, x[0], 1); })) {
        ++refused;
      }
      node.send(0, std::span(&kGo, 1));
      node.barrier();
    }
    where[node.id()] = node.allocate<std::int64_t>(1)[0].where();
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(refused.load(), 2);
  EXPECT_EQ(where[0], where[1]);
}

// A barrier refused inside a message handler has not arrived: node 1's next barrier still
// waits for node 0, which writes before its own. An allocation refused there has taken no
// pages: the next one is at the same address on both nodes.
TEST(CollectiveMistakes, CallsRefusedInsideAHandlerLeaveNoTrace) {
  std::atomic<int> refused{0};
  std::atomic<std::int64_t> seen{-1};
  std::vector<std::uint64_t> where(2);
  iso::options opts;
  opts.barrier_timeout = std::chrono::seconds(60);
  const int status = run_inproc(2, opts, [&](iso::node& node) {
    auto x = node.allocate<std::int64_t>(1, iso::placement::on(0));
    bool handled = false;
    node.set_handler(5, [&](iso::node_id, std::span<const std::byte>) {
      if (expect_error(error_code::failed_precondition, "inside a message handler",
                       [&] { node.barrier(); })) {
        ++refused;
      }
      if (expect_error(error_code::failed_precondition, "inside a message handler",
                       [&] { (void)node.allocate<std::int64_t>(4); })) {
        ++refused;
      }
      // Not collective, but it may wait: refused there as well, whether or not it would.
      if (expect_error(error_code::failed_precondition, "fence() inside a message handler",
                       [&] { node.fence(); })) {
        ++refused;
      }
      handled = true;
    });
    node.barrier();
    if (node.id() == 1) {
      {
        iso::isochron iso(node);
        iso.send(1, 5, {});
      }
      while (!handled) node.poll();
      node.send(0, std::span(&kGo, 1));
    } else {
      (void)node.receive();  // node 1's handler has run
      write_alone(node, x[0], 42);
    }
    node.barrier();
    if (node.id() == 1) seen = read_alone(node, x[0]);
    where[node.id()] = node.allocate<std::int64_t>(1)[0].where();
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(refused.load(), 3);
  EXPECT_EQ(seen.load(), 42);
  EXPECT_EQ(where[0], where[1]);
}

// One barrier() more on node 0 than on node 1 meets node 1's end of the job: node 0's
// barrier fails instead of passing alone, with the disagreement or with node 1's failure,
// whichever of the two nodes finds it first.
TEST(CollectiveMistakes, AnExtraBarrierDoesNotPassWithTheOthersEndOfTheJob) {
  iso::test::allow_log_lines_in_this_test();
  iso::options opts;
  opts.barrier_timeout = std::chrono::seconds(60);
  std::atomic<bool> passed{false};
  std::string failure;
  const int status = run_inproc(2, opts, [&](iso::node& node) {
    if (node.id() != 0) return;
    try {
      node.barrier();
      passed = true;
    } catch (const iso::error& e) {
      failure = e.what();
    }
  });
  EXPECT_FALSE(passed.load());
  EXPECT_TRUE(failure.find("made another collective call there") != std::string::npos ||
              failure.find("node 1 failed") != std::string::npos)
      << failure;
  EXPECT_NE(status, 0);
}

// Replicas that start from different initial bytes would differ for good: the creation is
// refused on every node.
TEST(CollectiveMistakes, ObjectsCreatedWithOtherInitialBytesOnEachNodeAreRefused) {
  const iso::object_type int_type =
      iso::typed_object<std::int64_t>("Int")
          .write(0, "inc", [](std::int64_t& v, std::int64_t by) { return v += by; })
          .type();
  std::atomic<int> refused{0};
  iso::options opts;
  opts.barrier_timeout = std::chrono::seconds(60);
  const int status = run_inproc(2, opts, [&](iso::node& node) {
    const std::int64_t start = 100 * (node.id() + 1);
    std::vector<std::byte> initial(sizeof(start));
    std::memcpy(initial.data(), &start, sizeof(start));
    if (expect_error(error_code::failed_precondition, "made object creation", [&] {
          iso::object x(node, int_type,
                        {.placement = iso::object_placement::replicated, .initial = initial});
        })) {
      ++refused;
    }
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(refused.load(), 2);
}

// Two fibers of node 0 each make a barrier at once: they are the node's two barriers, one
// after the other, never two arrivals of one barrier. Node 1 writes before either of its
// two, so both fibers must read the write after theirs.
TEST(CollectiveMistakes, BarriersOfTwoFibersOfANodeTakeTurns) {
  iso::options opts;
  opts.barrier_timeout = std::chrono::seconds(60);
  std::atomic<int> saw_the_write{0};
  const int status = run_inproc(2, opts, [&](iso::node& node) {
    auto x = node.allocate<std::int64_t>(1, iso::placement::on(1));
    if (node.id() == 1) {
      (void)node.receive();  // both fibers of node 0 are in their barriers
      write_alone(node, x[0], 1);
      node.barrier();
      node.barrier();
      return;
    }
    int entered = 0;
    const auto fiber_body = [&] {
      ++entered;
      node.barrier();
      if (read_alone(node, x[0]) == 1) ++saw_the_write;
    };
    iso::fiber a = iso::spawn(node, fiber_body);
    iso::fiber b = iso::spawn(node, fiber_body);
    while (entered < 2) iso::yield(node);
    node.send(1, std::span(&kGo, 1));
    a.join();
    b.join();
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(saw_the_write.load(), 2);
}

}  // namespace
