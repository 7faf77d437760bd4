// The C++ API's edges, as inproc jobs: what happens to an isochron that cannot be issued at
// scope exit, size limits of isochrons and messages, reads used at the wrong time or after
// their node, address ranges near 2^64, absurd allocations, and the conveniences of the
// typed API (literals, vectors).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "iso/iso.hpp"
#include "tests/support/inproc_job.hpp"
#include "tests/support/test_support.hpp"

namespace {

using iso::test::expect_error;
using iso::test::run_inproc;
using ::testing::HasSubstr;

iso::options bounded() {
  iso::options o;
  o.barrier_timeout = std::chrono::seconds(30);
  return o;
}

void sched_alone(iso::node& node, iso::shared_var<std::int64_t> v) {
  iso::isochron iso(node);
  iso.sched(v);
}

// Two nodes each send three messages before receiving any, from isochrons ended at scope
// exit; the window holds one message, so the second waits for credits that never come.
// Its isochron is lost, and that must fail the node (naming it), not vanish into a log.
TEST(ApiEdge, AnIsochronLostAtScopeExitFailsTheNode) {
  iso::test::allow_log_lines_in_this_test();  // the failed nodes log their failure
  iso::options o = bounded();
  o.barrier_timeout = std::chrono::seconds(2);  // also the credit time-out
  o.credit_window = 48 * 1024;
  std::mutex mu;
  std::vector<std::string> errors;
  std::atomic<int> received{0};
  const int status = run_inproc(2, o, [&](iso::node& node) {
    const iso::node_id peer = 1 - node.id();
    const std::vector<std::byte> payload(40 * 1024);
    try {
      for (int i = 0; i < 3; ++i) {
        iso::isochron iso(node);
        iso.send(peer, payload);
      }
      node.barrier();
      while (node.try_iso_receive()) ++received;
    } catch (const iso::error& e) {
      const std::lock_guard<std::mutex> lock(mu);
      errors.emplace_back(e.what());
      throw;
    }
  });
  EXPECT_NE(status, 0) << "the job succeeded, yet " << received.load() << " of 6 messages arrived";
  ASSERT_EQ(errors.size(), 2u);
  for (const std::string& e : errors) {
    EXPECT_THAT(e, HasSubstr("lost an isochron ended at scope exit"));
  }
  // At least one of them was the flow-control time-out itself, naming the receiver.
  EXPECT_THAT(errors[0] + errors[1], HasSubstr("no flow-control credits came back"));
}

// A message above max_message_size() is refused by the call that adds it (plain messages
// too), and so is one that would make the isochron too large for the NIC's queue; the
// isochron stays open, and what it accepted is delivered.
TEST(ApiEdge, MessagesAndIsochronsAboveTheirLimitsAreRefusedAtTheCall) {
  std::atomic<int> delivered{0};
  const int status = run_inproc(2, bounded(), [&](iso::node& node) {
    const iso::node_id peer = 1 - node.id();
    const std::size_t max = node.max_message_size();
    node.set_handler(1, [](iso::node_id, std::span<const std::byte>) {});
    node.barrier();
    const std::vector<std::byte> too_big(max + 1);
    const std::vector<std::byte> most(max);
    const std::vector<std::byte> half(max / 2 + 256);
    {
      iso::isochron iso(node);
      expect_error(iso::error_code::out_of_range, "exceeds the largest message",
                   [&] { iso.send(peer, too_big); });
      expect_error(iso::error_code::out_of_range, "exceeds the largest message",
                   [&] { iso.send(node.id(), too_big); });  // to itself: no NIC on the way
      expect_error(iso::error_code::out_of_range, "exceeds the largest message",
                   [&] { iso.send(peer, 1, too_big); });
      iso.send(peer, half);
      expect_error(iso::error_code::resource_exhausted, "more than the NIC queue's limit",
                   [&] { iso.send(peer, half); });
      iso.end();
    }
    EXPECT_EQ(node.iso_receive().bytes.size(), half.size());
    ++delivered;
    {
      iso::isochron iso(node);
      iso.send(peer, most);  // the largest message fits an isochron of its own
    }
    EXPECT_EQ(node.iso_receive().bytes.size(), most.size());
    ++delivered;
    expect_error(iso::error_code::out_of_range, "exceeds the maximum",
                 [&] { node.send(peer, too_big); });
    node.barrier();
    EXPECT_FALSE(node.try_iso_receive().has_value());
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(delivered.load(), 4);
}

// get() on a read whose own isochron is still open could never return: it is an error,
// while get() on an earlier isochron's read inside a later open one is fine.
TEST(ApiEdge, GetInsideTheReadsOwnIsochronIsAnError) {
  const int status = run_inproc(1, bounded(), [&](iso::node& node) {
    iso::shared_array<std::int64_t> x = node.allocate<std::int64_t>(1);
    {
      iso::isochron iso(node);
      iso.write(x[0], 7);
    }
    iso::value<std::int64_t> earlier;
    {
      iso::isochron iso(node);
      earlier = iso.read(x[0]);
    }
    iso::isochron iso(node);
    iso::value<std::int64_t> v = iso.read(x[0]);
    expect_error(iso::error_code::failed_precondition, "isochron still open",
                 [&] { (void)v.get(); });
    EXPECT_FALSE(v.ready());
    EXPECT_EQ(earlier.get(), 7);
    iso.end();
    EXPECT_EQ(v.get(), 7);
  });
  EXPECT_EQ(status, 0);
}

// Addresses near 2^64: one below the first variable of the first allocation is 2^64-1, and
// ranges that would wrap onto address 0 are refused, not half checked.
TEST(ApiEdge, AddressesAndRangesNearTwoToTheSixtyFourAreOutOfRange) {
  const int status = run_inproc(1, bounded(), [&](iso::node& node) {
    iso::shared_array<std::int64_t> xs = node.allocate<std::int64_t>(4);
    ASSERT_EQ(xs.first(), 0u);
    const std::size_t i = 0;
    iso::isochron iso(node);
    expect_error(iso::error_code::out_of_range, "outside isotach memory",
                 [&] { iso.write(xs[i - 1], 1); });
    expect_error(iso::error_code::out_of_range, "outside isotach memory",
                 [&] { iso.write(iso::shared_var<std::int64_t>(~0ULL), 1); });
    expect_error(iso::error_code::out_of_range, "outside isotach memory",
                 [&] { (void)iso.read(iso::shared_var<std::int64_t>(~0ULL)); });
    const iso::shared_array<std::int64_t> wrapping(~0ULL - 1, 4);  // ~0-1, ~0, 0, 1
    const std::vector<std::int64_t> four{1, 2, 3, 4};
    expect_error(iso::error_code::out_of_range, "runs past the last address",
                 [&] { iso.write(wrapping, 0, four); });
    expect_error(iso::error_code::out_of_range, "runs past the last address",
                 [&] { (void)iso.read(wrapping, 0, 4); });
    // Block operations stay within their array.
    expect_error(iso::error_code::out_of_range, "of an array of 4",
                 [&] { (void)iso.read(xs, 2, 3); });
    expect_error(iso::error_code::out_of_range, "of an array of 4",
                 [&] { (void)iso.read(xs, std::numeric_limits<std::size_t>::max(), 2); });
    expect_error(iso::error_code::out_of_range, "of an array of 4",
                 [&] { iso.write(xs, 1, four); });
    iso.end();
    EXPECT_EQ(iso::test::read_alone(node, xs[0]), 0);  // nothing was written
  });
  EXPECT_EQ(status, 0);
}

// A value without a read (default-constructed, moved from) and one that outlives its node
// report an error when used, and are harmless to destroy.
TEST(ApiEdge, ValuesWithoutAReadOrANodeFailPrecisely) {
  iso::value<std::int64_t> kept;
  iso::block_value<double> kept_block;
  const int status = run_inproc(1, bounded(), [&](iso::node& node) {
    const iso::value<std::int64_t> none;
    expect_error(iso::error_code::failed_precondition, "holds no read", [&] { (void)none.get(); });
    expect_error(iso::error_code::failed_precondition, "holds no read",
                 [&] { (void)none.ready(); });
    iso::shared_array<std::int64_t> x = node.allocate<std::int64_t>(1);
    iso::shared_array<double> ds = node.allocate<double>(2);
    {
      iso::isochron iso(node);
      iso.write(x[0], 5);
    }
    iso::value<std::int64_t> v;
    {
      iso::isochron iso(node);
      v = iso.read(x[0]);
    }
    const iso::value<std::int64_t> w = std::move(v);
    // NOLINTNEXTLINE(bugprone-use-after-move): the point of the test
    expect_error(iso::error_code::failed_precondition, "holds no read", [&] { (void)v.get(); });
    EXPECT_EQ(w.get(), 5);
    {
      iso::isochron iso(node);
      kept = iso.read(x[0]);  // never taken here: it outlives the node
      kept_block = iso.read(ds, 0, 2);
    }
  });
  EXPECT_EQ(status, 0);
  expect_error(iso::error_code::failed_precondition, "no longer exists", [&] { (void)kept.get(); });
  expect_error(iso::error_code::failed_precondition, "no longer exists",
               [&] { (void)kept.ready(); });
  expect_error(iso::error_code::failed_precondition, "no longer exists",
               [&] { (void)kept_block.get(); });
  // Destroyed here, after the node: harmless (ASan builds check).
}

// An absurd allocation is refused at once, naming the limit and what was asked; the node
// goes on working.
TEST(ApiEdge, AbsurdAllocationsAreRefusedUpFront) {
  const int status = run_inproc(2, bounded(), [&](iso::node& node) {
    expect_error(iso::error_code::resource_exhausted,
                 "allocating 1099511627776 variables: isotach memory holds at most 4294967296",
                 [&] { (void)node.allocate<std::int64_t>(1ULL << 40); });
    expect_error(iso::error_code::resource_exhausted, "isotach memory holds at most", [&] {
      (void)node.allocate<std::int32_t>(std::numeric_limits<std::size_t>::max());
    });
    iso::shared_array<std::int64_t> x = node.allocate<std::int64_t>(2, iso::placement::on(0));
    {
      iso::isochron iso(node);
      iso.write(x[node.id()], 10 + node.id());
    }
    node.barrier();
    EXPECT_EQ(iso::test::read_alone(node, x[0]), 10);
    EXPECT_EQ(iso::test::read_alone(node, x[1]), 11);
  });
  EXPECT_EQ(status, 0);
}

// The typed API takes literals and containers as they come: the variable decides the type.
TEST(ApiEdge, LiteralsAndContainersWriteWithoutCasts) {
  const int status = run_inproc(1, bounded(), [&](iso::node& node) {
    iso::shared_array<std::int64_t> counters = node.allocate<std::int64_t>(16);
    iso::shared_array<double> ds = node.allocate<double>(3);
    const std::vector<std::int64_t> values{1, 2, 3};
    const std::array<double, 2> pair{0.5, 1.5};
    {
      iso::isochron iso(node);
      iso.write(counters[4], 42);  // an int literal for an int64_t variable
      iso.write(counters, 8, values);
      iso.write(ds, 1, pair);
      iso.write(ds[0], 2);
      iso.sched(counters[5]);
    }
    {
      iso::isochron iso(node);
      iso.assign(counters[5], 43);
    }
    EXPECT_EQ(iso::test::read_alone(node, counters[4]), 42);
    EXPECT_EQ(iso::test::read_alone(node, counters[5]), 43);
    iso::isochron iso(node);
    iso::block_value<std::int64_t> block = iso.read(counters, 8, 3);
    iso::block_value<double> dv = iso.read(ds, 0, 3);
    iso.end();
    EXPECT_EQ(block.get(), values);
    EXPECT_EQ(dv.get(), (std::vector<double>{2.0, 0.5, 1.5}));
  });
  EXPECT_EQ(status, 0);
}

// A block read can land in the caller's buffer (no vector per read); a buffer of the wrong
// size is refused, naming both sizes, and the values stay readable.
TEST(ApiEdge, BlockReadsFillABufferOfTheRightSize) {
  const int status = run_inproc(1, bounded(), [&](iso::node& node) {
    iso::shared_array<double> ds = node.allocate<double>(4);
    {
      iso::isochron iso(node);
      iso.write(ds, 0, std::vector<double>{0.25, -1.5, 3.0, 8.0});
    }
    iso::isochron iso(node);
    iso::block_value<double> block = iso.read(ds, 1, 3);
    iso.end();
    std::vector<double> small(2);
    EXPECT_TRUE(expect_error(iso::error_code::invalid_argument,
                             "a buffer of 2 values for a read of 3",
                             [&] { block.get(std::span<double>(small)); }));
    std::vector<double> out(3);
    block.get(std::span<double>(out));
    EXPECT_EQ(out, (std::vector<double>{-1.5, 3.0, 8.0}));
  });
  EXPECT_EQ(status, 0);
}

// barrier() and quiesce() wait for this node's isochrons, so inside an open one they are
// refused (the C API refuses iso_barrier there too); the isochron stays usable.
TEST(ApiEdge, BarrierAndQuiesceInsideAnOpenIsochronAreRefused) {
  const int status = run_inproc(2, bounded(), [&](iso::node& node) {
    iso::shared_array<std::int64_t> x = node.allocate<std::int64_t>(2);
    {
      iso::isochron iso(node);
      iso::value<std::int64_t> v = iso.read(x[0]);
      expect_error(iso::error_code::failed_precondition, "barrier() inside an open isochron",
                   [&] { node.barrier(); });
      expect_error(iso::error_code::failed_precondition, "quiesce() inside an open isochron",
                   [&] { node.quiesce(); });
      iso.write(x[node.id()], 1);
    }
    node.barrier();
    EXPECT_EQ(iso::test::read_alone(node, x[1 - node.id()]), 1);
  });
  EXPECT_EQ(status, 0);
}

// quiet() returns only once every other node has executed this node's isochrons. Node 2's
// host is held inside the handler of node 0's first message until node 0 has been in
// quiet() for 300 ms (node 1 releases it): a quiet() that returned before node 2 executed
// everything finds node 2's count short, whenever it returns within that time; a correct
// one waits for the release. Then nodes 1 and 2 read node 0's writes, from their own copies
// and from node 2's, with no barrier after quiet().
TEST(ApiEdge, QuietReturnsOnceEveryNodeHasExecutedThisNodesIsochrons) {
  constexpr int kIsochrons = 20;
  iso::options o = bounded();
  o.nic = iso::nic_mode::thread;  // pulses close while node 2's host is held
  std::atomic<bool> in_quiet{false};
  std::atomic<bool> released{false};
  std::atomic<bool> quiet_done{false};
  std::array<std::atomic<int>, 3> handled{};  // node 0's messages executed, by node
  std::array<int, 3> at_return{-1, -1, -1};
  std::atomic<int> wrong{0};
  const int status = run_inproc(3, o, [&](iso::node& node) {
    const iso::node_id self = node.id();
    node.set_handler(1, [&](iso::node_id, std::span<const std::byte>) {
      if (self == 2 && handled[2].load() == 0) {
        while (!released.load()) std::this_thread::yield();
      }
      ++handled[self];
    });
    iso::shared_array<std::int64_t> everywhere = node.allocate<std::int64_t>(kIsochrons);
    iso::shared_array<std::int64_t> on2 =
        node.allocate<std::int64_t>(kIsochrons, iso::placement::on(2));
    node.barrier();
    if (self == 0) {
      for (int i = 0; i < kIsochrons; ++i) {
        iso::isochron iso(node);
        iso.write(everywhere[i], 100 + i);
        iso.write(on2[i], 200 + i);
        iso.send(1, 1, {});
        iso.send(2, 1, {});
      }
      in_quiet = true;
      node.quiet();
      at_return = {0, handled[1].load(), handled[2].load()};
      quiet_done = true;
    } else {
      if (self == 1) {
        while (!in_quiet) node.poll();
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
        while (!quiet_done && std::chrono::steady_clock::now() < until) node.poll();
        released = true;
      }
      while (!quiet_done) node.poll();
      for (int i = 0; i < kIsochrons; ++i) {
        if (iso::test::read_alone(node, everywhere[i]) != 100 + i) ++wrong;
        if (iso::test::read_alone(node, on2[i]) != 200 + i) ++wrong;
      }
    }
    node.barrier();
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(at_return[1], kIsochrons);
  EXPECT_EQ(at_return[2], kIsochrons);
  EXPECT_EQ(wrong.load(), 0);
}

// A read behind this node's own sched, not yet assigned, waiting in this node's copy: only
// this node's assign can give its value, so get() is refused instead of waiting forever;
// after the assign it works. Before, the get() never returned.
TEST(ApiEdge, AGetThatOnlyThisNodesOwnAssignCouldEndIsRefused) {
  std::atomic<std::int64_t> got{-1};
  const int status = run_inproc(2, bounded(), [&](iso::node& node) {
    auto x = node.allocate<std::int64_t>(1, iso::placement::on(0));
    if (node.id() == 0) {
      sched_alone(node, x[0]);
      iso::value<std::int64_t> v;
      {
        iso::isochron iso(node);
        v = iso.read(x[0]);
      }
      expect_error(iso::error_code::failed_precondition,
                   "which waits for the assign of this node's own sched", [&] { (void)v.get(); });
      {
        iso::isochron iso(node);
        iso.assign(x[0], 7);
      }
      got = v.get();
    }
    node.barrier();
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(got.load(), 7);
}

// A body that returns with a sched never assigned fails its node, naming the address,
// instead of waiting at the job's end for the read behind it. Before, the job never ended.
TEST(ApiEdge, ABodyThatReturnsWithASchedNeverAssignedFailsNamingIt) {
  iso::test::allow_log_lines_in_this_test();
  testing::internal::CaptureStderr();
  const int status = run_inproc(1, bounded(), [&](iso::node& node) {
    auto x = node.allocate<std::int64_t>(3);
    {
      iso::isochron iso(node);
      iso.sched(x[2]);
    }
    iso::isochron iso(node);
    (void)iso.read(x[2]);
  });
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(status, 0);
  EXPECT_THAT(log, HasSubstr("node 0: the body returned while a read (node 0's) of address 2 "
                             "waits for the assign of this node's sched"));
}

// A sched that a later write took over: the read after the write sees the write, and a
// body that returns without the assign holds up nobody, so neither is refused.
TEST(ApiEdge, ASchedThatAWriteTookOverRefusesNothing) {
  std::atomic<std::int64_t> got{-1};
  const int status = run_inproc(2, bounded(), [&](iso::node& node) {
    auto x = node.allocate<std::int64_t>(1, iso::placement::on(0));
    if (node.id() == 0) {
      sched_alone(node, x[0]);
      {
        iso::isochron iso(node);
        iso.write(x[0], 5);
      }
      iso::value<std::int64_t> v;
      {
        iso::isochron iso(node);
        v = iso.read(x[0]);
      }
      got = v.get();
    }
    node.barrier();
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(got.load(), 5);
}

// A handler that replaces itself, and registers others, while it runs: the change waits
// until it returns. Before, the function that ran was destroyed under it (the string it
// uses after set_handler() was freed: AddressSanitizer's heap-use-after-free).
TEST(ApiEdge, AHandlerThatReplacesItselfKeepsRunningToItsEnd) {
  std::vector<std::string> seen;
  const int status = run_inproc(1, bounded(), [&](iso::node& node) {
    const std::string first_words(64, 'f');  // on the heap, captured by value
    node.set_handler(3, [&node, &seen, first_words](iso::node_id, std::span<const std::byte>) {
      node.set_handler(
          3, [&seen](iso::node_id, std::span<const std::byte>) { seen.emplace_back("second"); });
      for (iso::handler_id id = 10; id < 100; ++id) {
        node.set_handler(id, [](iso::node_id, std::span<const std::byte>) {});
      }
      seen.push_back(first_words);
    });
    for (int i = 0; i < 2; ++i) {
      iso::isochron iso(node);
      iso.send(node.id(), 3, {});
    }
    node.quiesce();
  });
  EXPECT_EQ(status, 0);
  EXPECT_THAT(seen, testing::ElementsAre(std::string(64, 'f'), "second"));
}

// quiet() where it cannot work, and the runtime's handler id, are refused.
TEST(ApiEdge, QuietAndTheReservedHandlerIdAreRefusedWhereTheyCannotWork) {
  const int status = run_inproc(2, bounded(), [&](iso::node& node) {
    expect_error(iso::error_code::invalid_argument, "reserved for the runtime", [&] {
      node.set_handler(0xffffffffu, [](iso::node_id, std::span<const std::byte>) {});
    });
    // An empty handler removes the id: a message to it is refused at the send, where an
    // empty one would have thrown on arrival.
    node.set_handler(7, [](iso::node_id, std::span<const std::byte>) {});
    node.set_handler(7, nullptr);
    node.barrier();
    {
      iso::isochron iso(node);
      expect_error(iso::error_code::not_found, "no handler is registered under id 7",
                   [&] { iso.send(1 - node.id(), 7, {}); });
      expect_error(iso::error_code::failed_precondition, "quiet() inside an open isochron",
                   [&] { node.quiet(); });
      expect_error(iso::error_code::invalid_argument, "reserved for the runtime",
                   [&] { iso.send(1 - node.id(), 0xffffffffu, {}); });
    }
    node.quiet();
    node.barrier();
  });
  EXPECT_EQ(status, 0);
}

}  // namespace
