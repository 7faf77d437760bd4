// Isotach shared memory through the public API, as inproc jobs (nodes are threads), with
// the NIC on its own thread and inline: semantics of read/write/sched/assign, pipelining,
// block operations, isochronous messages, and every misuse error.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "iso/iso.hpp"
#include "tests/support/inproc_job.hpp"
#include "tests/support/test_support.hpp"

namespace {

using iso::test::run_inproc;

class Isotach : public iso::test::nic_mode_test {};

INSTANTIATE_TEST_SUITE_P(NicModes, Isotach, iso::test::both_nic_modes(), iso::test::nic_mode_name);

// Reads var(n) for every node n in its own isochron; counts (and reports, naming `when`)
// every value other than expected(n).
template <typename Var, typename Expected>
void expect_reads(iso::node& node, Var var, Expected expected, const std::string& when,
                  std::atomic<int>& wrong) {
  for (iso::node_id n = 0; n < node.count(); ++n) {
    const std::int64_t v = iso::test::read_alone(node, var(n));
    if (v != expected(n)) {
      ++wrong;
      ADD_FAILURE() << when << ": node " << node.id() << " read " << v
                    << " from the variable of node " << n;
    }
  }
}

// A write becomes visible everywhere, whatever the placement of the variable.
TEST_P(Isotach, WritesAreVisibleOnEveryNodeForEveryPlacement) {
  std::atomic<int> wrong{0};
  const int status = run_inproc(3, opts(), [&](iso::node& node) {
    const iso::placement placements[] = {iso::placement::everywhere(), iso::placement::on(0),
                                         iso::placement::on(2), iso::placement::on({1, 2}),
                                         iso::placement::spread()};
    int which = 0;
    for (const iso::placement& where : placements) {
      ++which;
      auto xs = node.allocate<std::int64_t>(3, where);
      {
        iso::isochron iso(node);
        iso.write(xs[node.id()], std::int64_t{100} + node.id());
      }
      node.quiesce();
      node.barrier();
      expect_reads(
          node, [&](iso::node_id n) { return xs[n]; },
          [](iso::node_id n) { return 100 + static_cast<std::int64_t>(n); },
          "placement " + std::to_string(which), wrong);
      node.barrier();
    }
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(wrong.load(), 0);
}

// A barrier waits until everything issued before it has executed here: a write by one
// node to a copy held only by another is there when the barrier returns. Many rounds, so
// that some barrier meets the NIC closing the write's pulse just as the host looks.
TEST_P(Isotach, EveryWriteBeforeABarrierIsVisibleAfterIt) {
  constexpr int kRounds = 300;
  std::atomic<int> wrong{0};
  const int status = run_inproc(3, opts(), [&](iso::node& node) {
    // xs[n] lives only on node (n + 1) % 3, and only node n writes it.
    std::vector<iso::shared_var<std::int64_t>> xs;
    for (iso::node_id n = 0; n < node.count(); ++n) {
      xs.push_back(node.allocate<std::int64_t>(1, iso::placement::on((n + 1) % node.count()))[0]);
    }
    for (int round = 1; round <= kRounds; ++round) {
      {
        iso::isochron iso(node);
        iso.write(xs[node.id()], std::int64_t{round});
      }
      node.barrier();
      expect_reads(
          node, [&](iso::node_id n) { return xs[n]; },
          [&](iso::node_id) { return std::int64_t{round}; }, "round " + std::to_string(round),
          wrong);
      node.barrier();
    }
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(wrong.load(), 0);
}

// A node that spins on a flag held only by itself (purely local isochrons, which never
// wait) still lets its NIC and its pulses run: another node's write to the flag arrives.
TEST_P(Isotach, SpinningOnALocalFlagLetsAnotherNodesWriteArrive) {
  std::atomic<bool> saw{false};
  const int status = run_inproc(2, opts(), [&](iso::node& node) {
    auto flag = node.allocate<std::int64_t>(1, iso::placement::on(1))[0];
    node.barrier();
    if (node.id() == 0) {
      iso::isochron iso(node);
      iso.write(flag, std::int64_t{1});
    } else {
      // Bounded, so that a regression fails instead of hanging.
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (std::chrono::steady_clock::now() < deadline) {
        if (iso::test::read_alone(node, flag) == 1) {
          saw = true;
          break;
        }
      }
    }
    node.quiesce();
    node.barrier();
  });
  EXPECT_EQ(status, 0);
  EXPECT_TRUE(saw.load());
}

// Hundreds of isochrons outstanding per node, none waited on until all are issued.
TEST_P(Isotach, HundredsOfOutstandingIsochronsPipeline) {
  std::atomic<int> wrong{0};
  const int status = run_inproc(2, opts(), [&](iso::node& node) {
    auto xs = node.allocate<std::uint64_t>(1000, iso::placement::spread());
    node.barrier();
    const iso::node_id other = 1 - node.id();
    std::vector<iso::value<std::uint64_t>> reads;
    for (std::uint64_t i = 0; i < 500; ++i) {
      iso::isochron iso(node);
      iso.write(xs[2 * i + node.id()], i * 10 + node.id());
      reads.push_back(iso.read(xs[2 * i + node.id()]));
    }
    for (std::uint64_t i = 0; i < 500; ++i) {
      if (reads[i].get() != i * 10 + node.id()) ++wrong;
    }
    node.quiesce();
    node.barrier();
    iso::isochron iso(node);
    iso::block_value<std::uint64_t> all = iso.read(xs, 0, 1000);
    iso.end();
    const std::vector<std::uint64_t> values = all.get();
    for (std::uint64_t i = 0; i < 500; ++i) {
      if (values[2 * i + other] != i * 10 + other) ++wrong;
    }
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(wrong.load(), 0);
}

// A read that comes after a sched in logical time returns the value the assign supplies,
// not the value before the sched: it waited in the pending-read table.
TEST_P(Isotach, ReadAfterSchedWaitsForTheAssign) {
  std::atomic<std::int64_t> seen{-1};
  const int status = run_inproc(2, opts(), [&](iso::node& node) {
    auto x = node.allocate<std::int64_t>(1, iso::placement::on(0))[0];
    if (node.id() == 0) {
      iso::isochron iso(node);
      iso.write(x, std::int64_t{5});
      iso.sched(x);
    }
    node.quiesce();
    node.barrier();  // node 0's sched has executed: node 1's next isochron comes after it
    iso::value<std::int64_t> v;
    if (node.id() == 1) {
      iso::isochron iso(node);
      v = iso.read(x);
    }
    node.barrier();
    if (node.id() == 0) {
      iso::isochron iso(node);
      iso.assign(x, std::int64_t{7});
    } else {
      seen = v.get();
    }
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(seen.load(), 7);
}

TEST_P(Isotach, BlockOperationsSpanPages) {
  std::atomic<int> wrong{0};
  iso::options o = opts();
  o.page_variables = 64;
  const int status = run_inproc(2, o, [&](iso::node& node) {
    auto xs = node.allocate<double>(300, iso::placement::spread());
    if (node.id() == 0) {
      std::vector<double> values(250);
      std::iota(values.begin(), values.end(), 0.5);
      iso::isochron iso(node);
      iso.write(xs, 20, std::span<const double>(values));
    }
    node.quiesce();
    node.barrier();
    iso::isochron iso(node);
    auto block = iso.read(xs, 20, 250);
    iso.end();
    const std::vector<double> got = block.get();
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (got[i] != 0.5 + static_cast<double>(i)) ++wrong;
    }
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(wrong.load(), 0);
}

// An isochron part far larger than one transport packet (160 KB of writes to one remote
// node) travels as fragments, executes whole at one logical time, and so does the reply to
// a block read of it.
TEST_P(Isotach, LargeIsochronPartsTravelInFragments) {
  constexpr std::size_t kCount = 20000;
  std::atomic<int> wrong{0};
  iso::options o = opts();
  o.page_variables = 1u << 15;  // one page: the whole block goes to one node
  const int status = run_inproc(2, o, [&](iso::node& node) {
    auto xs = node.allocate<std::int64_t>(kCount, iso::placement::on(1));
    if (node.id() == 0) {
      std::vector<std::int64_t> values(kCount);
      std::iota(values.begin(), values.end(), 7);
      iso::isochron iso(node);
      iso.write(xs, 0, std::span<const std::int64_t>(values));
      iso.end();
      iso::isochron check(node);
      auto back = check.read(xs, 0, kCount);
      check.end();
      const std::vector<std::int64_t> got = back.get();
      for (std::size_t i = 0; i < kCount; ++i) {
        if (got[i] != static_cast<std::int64_t>(i) + 7) ++wrong;
      }
    }
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(wrong.load(), 0);
}

// Isochronous messages reach every receiver in one order, mixed with memory operations;
// per sender that order is issue order.
TEST_P(Isotach, MessagesArriveInOneOrderEverywhere) {
  constexpr int kNodes = 3;
  constexpr std::uint32_t kPerNode = 200;
  std::mutex mu;
  std::vector<std::vector<std::pair<iso::node_id, std::uint32_t>>> orders(kNodes);
  const int status = run_inproc(kNodes, opts(), [&](iso::node& node) {
    std::vector<std::pair<iso::node_id, std::uint32_t>> mine;
    node.set_handler(7, [&](iso::node_id source, std::span<const std::byte> payload) {
      std::uint32_t seq;
      std::memcpy(&seq, payload.data(), sizeof(seq));
      mine.emplace_back(source, seq);
    });
    auto x = node.allocate<std::int32_t>(1)[0];
    node.barrier();
    for (std::uint32_t i = 0; i < kPerNode; ++i) {
      iso::isochron iso(node);
      for (iso::node_id to = 0; to < node.count(); ++to) {
        iso.send(to, 7, std::as_bytes(std::span(&i, 1)));
      }
      iso.write(x, static_cast<std::int32_t>(i));
    }
    while (mine.size() < kPerNode * node.count()) node.poll();
    std::lock_guard lock(mu);
    orders[node.id()] = mine;
  });
  EXPECT_EQ(status, 0);
  for (int n = 1; n < kNodes; ++n) EXPECT_EQ(orders[n], orders[0]) << "node " << n;
  std::vector<std::uint32_t> next(kNodes, 0);
  for (const auto& [source, seq] : orders[0]) {
    EXPECT_EQ(seq, next[source]) << "from node " << source;
    next[source] = seq + 1;
  }
}

// A handler runs in the middle of a pulse: one that waits gets a clear error, and the
// exception it then throws stops the node with a message naming the handler, instead of
// unwinding through the pulse.
TEST_P(Isotach, AHandlerThatWaitsStopsTheNodeWithAClearError) {
  iso::test::allow_log_lines_in_this_test();  // the failing node's error is logged
  std::mutex mu;
  std::string seen;
  const int status = run_inproc(2, opts(), [&](iso::node& node) {
    node.set_handler(3, [&](iso::node_id, std::span<const std::byte>) { node.poll(); });
    try {  // the message may run in either barrier
      node.barrier();
      if (node.id() == 0) {
        iso::isochron iso(node);
        iso.send(1, 3, {});
        iso.end();
      }
      node.barrier();
    } catch (const iso::error& e) {
      std::lock_guard lock(mu);
      if (node.id() == 1) seen = e.what();
      throw;
    }
  });
  EXPECT_NE(status, 0);
  EXPECT_NE(seen.find("handler for id 3"), std::string::npos) << seen;
  EXPECT_NE(seen.find("inside a message handler"), std::string::npos) << seen;
}

// After a handler's exception stops a node, nothing more executes there: no later pulse
// runs its handlers, and asking again gives the same error (not a crash).
TEST_P(Isotach, NothingExecutesAfterAFailedPulse) {
  iso::test::allow_log_lines_in_this_test();  // the failing node's error is logged
  constexpr int kLater = 20;
  std::atomic<int> later_calls{0};
  std::mutex mu;
  std::string first;
  std::string again;
  const int status = run_inproc(2, opts(), [&](iso::node& node) {
    node.set_handler(3, [](iso::node_id, std::span<const std::byte>) {
      throw std::runtime_error("handler 3 gives up");
    });
    node.set_handler(4, [&](iso::node_id, std::span<const std::byte>) { ++later_calls; });
    if (node.id() == 0) {
      node.barrier();
      for (int i = 0; i <= kLater; ++i) {
        iso::isochron iso(node);
        iso.send(1, i == 0 ? 3 : 4, {});
      }
      node.barrier();  // fails: node 1 stops
      return;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    try {  // the first message may run while node 1 is still in the barrier
      node.barrier();
      for (;;) {
        node.poll();
        ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the handler never ran";
      }
    } catch (const iso::error& e) {
      std::lock_guard lock(mu);
      first = e.what();
    }
    try {
      node.poll();
    } catch (const iso::error& e) {
      std::lock_guard lock(mu);
      again = e.what();
    }
    throw iso::error(iso::error_code::aborted, "node 1 stopped, as it should");
  });
  EXPECT_NE(status, 0);
  EXPECT_NE(first.find("handler 3 gives up"), std::string::npos) << first;
  EXPECT_EQ(again, first);
  EXPECT_EQ(later_calls.load(), 0);
}

TEST_P(Isotach, MisuseIsAClearErrorAndChangesNothing) {
  std::atomic<int> checked{0};
  const int status = run_inproc(2, opts(), [&](iso::node& node) {
    auto x = node.allocate<std::int64_t>(4)[0];
    auto small = node.allocate<std::int32_t>(4)[0];
    auto expect_error = [&](iso::error_code code, const char* fragment, auto&& action) {
      checked += iso::test::expect_error(code, fragment, action);
    };
    iso::isochron iso(node);
    expect_error(iso::error_code::failed_precondition, "without a sched",
                 [&] { iso.assign(x, std::int64_t{1}); });
    iso.sched(x);
    expect_error(iso::error_code::failed_precondition, "already has an outstanding sched",
                 [&] { iso.sched(x); });
    expect_error(iso::error_code::out_of_range, "outside isotach memory",
                 [&] { iso.write(iso::shared_var<std::int64_t>(1u << 30), std::int64_t{1}); });
    expect_error(iso::error_code::invalid_argument, "32-bit",
                 [&] { iso.write_raw(x.where(), 4, std::vector<std::uint64_t>{1}); });
    expect_error(iso::error_code::invalid_argument, "64-bit",
                 [&] { iso.write_raw(small.where(), 8, std::vector<std::uint64_t>{1}); });
    expect_error(iso::error_code::not_found, "no handler", [&] { iso.send(0, 99, {}); });
    expect_error(iso::error_code::failed_precondition, "already open",
                 [&] { iso::isochron nested(node); });
    iso.assign(x, std::int64_t{3});  // the isochron is still usable after the errors
    iso.end();
    expect_error(iso::error_code::invalid_argument, "placed on node 5",
                 [&] { node.allocate<std::int64_t>(1, iso::placement::on(5)); });
    node.quiesce();
    node.barrier();
    iso::isochron check(node);
    auto v = check.read(x);
    check.end();
    EXPECT_EQ(v.get(), 3);
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(checked.load(), 2 * 8);
}

}  // namespace
