// Same-host reads (options::direct_reads): read-only isochrons served from another node's
// copy without the NICs. They must be used when they can be, never when they cannot, and
// never break sequential consistency, in particular against purely local isochrons, which
// sit where their own node's copies stand in logical time.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>

#include "iso/iso.hpp"
#include "tests/support/inproc_job.hpp"
#include "tests/support/test_support.hpp"

namespace {

using iso::test::read_alone;
using iso::test::run_inproc;

class DirectReads : public iso::test::nic_mode_test {};

INSTANTIATE_TEST_SUITE_P(NicModes, DirectReads, iso::test::both_nic_modes(),
                         iso::test::nic_mode_name);

// `rounds` times: writes i to `mine` in an isochron of its own, then reads `theirs` alone.
// Counts in `went_back` the reads that saw an older value than the one before; returns how
// many reads were served from the other node's window.
std::uint64_t write_then_read(iso::node& node, iso::shared_var<std::int64_t> mine,
                              iso::shared_var<std::int64_t> theirs, std::int64_t rounds,
                              std::atomic<int>& went_back) {
  const std::uint64_t before = node.status().direct_reads;
  std::int64_t last = 0;
  for (std::int64_t i = 1; i <= rounds; ++i) {
    {
      iso::isochron iso(node);
      iso.write(mine, i);
    }
    const std::int64_t v = read_alone(node, theirs);
    if (v < last) ++went_back;
    last = v;
  }
  return node.status().direct_reads - before;
}

// Node 0 reads a variable held only by node 1, which keeps writing it in purely local
// isochrons: each read sees a value at least as new as the one before, the final value
// arrives, and reads are served from node 1's window.
TEST_P(DirectReads, ReadsOfAnotherNodesCopyAreServedWithoutTheNic) {
  constexpr std::int64_t kFinal = 2000;
  std::atomic<std::uint64_t> served{0};
  std::atomic<int> went_back{0};
  const int status = run_inproc(2, opts(), [&](iso::node& node) {
    auto x = node.allocate<std::int64_t>(1, iso::placement::on(1))[0];
    node.barrier();
    if (node.id() == 1) {
      for (std::int64_t i = 1; i <= kFinal; ++i) {
        iso::isochron iso(node);
        iso.write(x, i);
      }
    } else {
      // Until the final value, and as many reads again after it: by then node 1 waits in
      // the barrier, its copy standing still, and the reads must be served from it.
      std::int64_t last = 0;
      for (int after_final = 0; after_final < 200; after_final += last == kFinal ? 1 : 0) {
        const std::int64_t v = read_alone(node, x);
        if (v < last) ++went_back;
        last = v;
      }
      served = node.status().direct_reads;
    }
    node.barrier();
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(went_back.load(), 0);
  EXPECT_GT(served.load(), 0u);
}

// The symmetric pattern: each node writes its own variable and reads the other's, in turn.
// The reads must be served from the other node's window, and each node must see the other's
// writes in order. Twice these reads took the NIC path: once half of them waited out their
// attempts and then took it, which made the pattern ten times slower than with same-host
// reads off; and with NIC threads nearly all did, because a parked SIU's pulse, standing
// still, made every owner's copy look too far on in logical time (siu::stamp_base).
// Nor may the pattern need logical time to move: once, node 0's write after each read of
// node 1's copy had to wait for the next pulse (its local isochrons sat before node 1's
// at one pulse), and each iteration cost a pulse (20 to 45 us with NIC threads on 2 cores).
TEST_P(DirectReads, CrossReadsOfEachOthersVariableAreServedFromTheWindow) {
  constexpr int kIterations = 2000;
  iso::options o = opts();
  o.barrier_timeout = std::chrono::seconds(60);
  std::atomic<int> went_back{0};
  std::atomic<std::uint64_t> served_least{kIterations};
  std::atomic<std::uint64_t> most_pulses{0};
  const int status = run_inproc(2, o, [&](iso::node& node) {
    const auto x = node.allocate<std::int64_t>(1, iso::placement::on(0))[0];
    const auto y = node.allocate<std::int64_t>(1, iso::placement::on(1))[0];
    const auto mine = node.id() == 0 ? x : y;
    const auto theirs = node.id() == 0 ? y : x;
    node.barrier();
    const std::uint64_t pulse_before = node.status().executed_pulse;
    const std::uint64_t served = write_then_read(node, mine, theirs, kIterations, went_back);
    const std::uint64_t pulses = node.status().executed_pulse - pulse_before;
    std::uint64_t least = served_least.load();
    while (served < least && !served_least.compare_exchange_weak(least, served)) {
    }
    std::uint64_t most = most_pulses.load();
    while (pulses > most && !most_pulses.compare_exchange_weak(most, pulses)) {
    }
    node.barrier();
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(went_back.load(), 0);
  // The reads that take the NIC path move time on (below), and nothing else should.
  EXPECT_LE(most_pulses.load(), kIterations / 20) << "pulses executed during the pattern";
  // A read that took the NIC path would move time on: the pulse bound below leaves room
  // for 5 % of them. The old faults sent about half of them there, or nearly all.
  EXPECT_GE(served_least.load(), kIterations * 19 / 20) << "reads served from the window";
}

// A reader whose own isochrons go through the NICs needs the owner's copies at the pulse
// they executed at. Here the owner never waits (purely local isochrons only), so it runs
// its pulses only now and then: the reader must demand that pulse and tell the owner it
// waits for it, and be served from the window. Once, it waited out a fixed number of
// attempts and took the NIC path, nearly every time. With NIC threads only: an inline
// NIC's reader still waits so (served_reads.cpp says why).
TEST(DirectReadsThreaded, AReaderIsServedWhileItsOwnerNeverWaits) {
  constexpr int kReads = 500;
  std::atomic<bool> reader_done{false};
  std::atomic<int> went_back{0};
  std::atomic<std::uint64_t> served{0};
  iso::options o;
  o.nic = iso::nic_mode::thread;
  o.barrier_timeout = std::chrono::seconds(60);
  const int status = run_inproc(2, o, [&](iso::node& node) {
    const auto x = node.allocate<std::int64_t>(1, iso::placement::on(0))[0];
    // Copies on both nodes: a write to it is not purely local, and executes at a pulse.
    const auto y = node.allocate<std::int64_t>(1, iso::placement::on({0, 1}))[0];
    node.barrier();
    if (node.id() == 0) {
      // Purely local isochrons only: nothing here waits, or polls but now and then.
      for (std::int64_t i = 1; !reader_done.load(); ++i) {
        iso::isochron iso(node);
        iso.write(x, i);
      }
    } else {
      const std::uint64_t before = node.status().direct_reads;
      std::int64_t last = 0;
      for (std::int64_t i = 1; i <= kReads; ++i) {
        {
          iso::isochron iso(node);
          iso.write(y, i);
        }
        node.quiesce();  // executed here: the read must sit after its pulse
        const std::int64_t v = read_alone(node, x);
        if (v < last) ++went_back;
        last = v;
      }
      served = node.status().direct_reads - before;
      reader_done = true;
    }
    node.barrier();
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(went_back.load(), 0);
  EXPECT_GE(served.load(), kReads * 9 / 10) << "reads served from the window";
}

// With the option off, every read takes the NIC path.
TEST_P(DirectReads, TheOptionTurnsThemOff) {
  iso::options o = opts();
  o.direct_reads = false;
  std::atomic<std::uint64_t> served{1};
  std::atomic<std::int64_t> seen{0};
  const int status = run_inproc(2, o, [&](iso::node& node) {
    auto x = node.allocate<std::int64_t>(1, iso::placement::on(1))[0];
    if (node.id() == 1) {
      iso::isochron iso(node);
      iso.write(x, std::int64_t{7});
    }
    node.quiesce();
    node.barrier();
    if (node.id() == 0) {
      for (int i = 0; i < 50; ++i) seen = read_alone(node, x);
      served = node.status().direct_reads;
    }
    node.barrier();
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(seen.load(), 7);
  EXPECT_EQ(served.load(), 0u);
}

// Message passing across a same-host read and a local one. Node 2 writes y (copies on
// nodes 0 and 1) and then x (copy on node 1 only), each in its own isochron. Node 0 reads
// x from node 1's window and then y from its own copy, each alone in an isochron: having
// seen x = i it must see y >= i. Node 0's own copy may stand earlier in logical time than
// node 1's, so the local read must wait for it to catch up; if it ran at once, it would
// see an older y.
TEST_P(DirectReads, ALocalReadAfterADirectOneNeverSeesAnOlderState) {
  constexpr std::int64_t kRounds = 2000;
  std::atomic<int> violations{0};
  std::atomic<std::uint64_t> served{0};
  const int status = run_inproc(3, opts(), [&](iso::node& node) {
    auto y = node.allocate<std::int64_t>(1, iso::placement::on({0, 1}))[0];
    auto x = node.allocate<std::int64_t>(1, iso::placement::on(1))[0];
    auto done = node.allocate<std::int64_t>(1, iso::placement::on(0))[0];
    node.barrier();
    if (node.id() == 2) {
      for (std::int64_t i = 1; i <= kRounds; ++i) {
        {
          iso::isochron iso(node);
          iso.write(y, i);
        }
        iso::isochron iso(node);
        iso.write(x, i);
      }
    } else if (node.id() == 0) {
      // Until the last round, and as many reads again after it (when logical time stands
      // still, the reads of x must be served from node 1's window).
      std::int64_t seen_x = 0;
      for (int after_last = 0; after_last < 200; after_last += seen_x == kRounds ? 1 : 0) {
        seen_x = read_alone(node, x);
        if (read_alone(node, y) < seen_x) ++violations;
      }
      served = node.status().direct_reads;
      iso::isochron iso(node);
      iso.write(done, std::int64_t{1});
    } else {
      // Node 1 only serves; it must keep its copies moving through logical time.
      while (read_alone(node, done) != 1) {
      }
    }
    node.quiesce();
    node.barrier();
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(violations.load(), 0);
  EXPECT_GT(served.load(), 0u);
}

// Pages that do not fit the owner's window live on its heap and are read through the NICs;
// those that fit are served from the window. Either way every read returns what was written.
TEST_P(DirectReads, PagesBeyondTheWindowAreReadThroughTheNic) {
  iso::options o = opts();
  // Pages of 4 KiB (256 variables of 16 bytes); the window is rounded up to whole 4 KiB
  // pages, so the header and two pages leave no room for a third.
  o.page_variables = 256;
  o.window_bytes = 64 + 2 * 4096;
  std::atomic<int> wrong{0};
  std::atomic<std::uint64_t> served{0};
  const int status = run_inproc(2, o, [&](iso::node& node) {
    auto xs = node.allocate<std::int64_t>(4 * 256, iso::placement::on(1));
    if (node.id() == 1) {
      iso::isochron iso(node);
      for (std::size_t i = 0; i < xs.size(); i += 256) {
        iso.write(xs[i], static_cast<std::int64_t>(1000 + i));
      }
    }
    node.quiesce();
    node.barrier();
    if (node.id() == 0) {
      for (int round = 0; round < 50; ++round) {
        for (std::size_t i = 0; i < xs.size(); i += 256) {
          if (read_alone(node, xs[i]) != static_cast<std::int64_t>(1000 + i)) ++wrong;
        }
      }
      served = node.status().direct_reads;
    }
    node.barrier();
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(wrong.load(), 0);
  // Only the first two pages can be served from the window: at most 100 of the 200 reads.
  EXPECT_GT(served.load(), 0u);
  EXPECT_LE(served.load(), 100u);
}

// A read of a variable that waits for its assign is not served from the window: it goes
// to the owner's pending-read table and returns the assigned value.
TEST_P(DirectReads, AReadOfAnUnsubstantiatedVariableWaitsForItsAssign) {
  std::atomic<std::int64_t> seen{0};
  const int status = run_inproc(2, opts(), [&](iso::node& node) {
    auto x = node.allocate<std::int64_t>(1, iso::placement::on(1))[0];
    auto ready = node.allocate<std::int64_t>(1, iso::placement::on(0))[0];
    if (node.id() == 1) {
      {
        iso::isochron iso(node);
        iso.sched(x);
      }
      node.quiesce();
    }
    node.barrier();
    if (node.id() == 0) {
      iso::value<std::int64_t> v;
      {
        iso::isochron iso(node);
        v = iso.read(x);
      }
      {
        iso::isochron iso(node);
        iso.write(ready, std::int64_t{1});
      }
      seen = v.get();
    } else {
      while (read_alone(node, ready) != 1) {
      }
      iso::isochron iso(node);
      iso.assign(x, std::int64_t{42});
    }
    node.quiesce();
    node.barrier();
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(seen.load(), 42);
}

}  // namespace
