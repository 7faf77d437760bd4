// A randomized multi-node workload whose executed history (recorded by the runtime) must
// be sequentially consistent: replayed in (pulse, step, pid, rank) order, every read returns
// the latest write (or the assign of the latest sched) before it, and each node's
// isochrons appear in its issue order. Run on one switch and on a three-switch tree.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <map>
#include <mutex>
#include <random>

#include "iso/iso.hpp"
#include "tests/support/inproc_job.hpp"
#include "tests/support/test_support.hpp"
#include "tools/sc/replay_checker.hpp"

namespace {

std::vector<iso::trace_event> run_random_workload(int nodes, iso::options opts,
                                                  std::uint32_t seed) {
  opts.trace = true;
  std::mutex mu;
  std::vector<iso::trace_event> all;
  const int status = iso::test::run_inproc(nodes, opts, [&](iso::node& node) {
    std::mt19937 rng(seed * 131 + node.id());
    // Variables with every kind of placement, and a few per node for sched/assign.
    auto shared = node.allocate<std::int64_t>(8, iso::placement::everywhere());
    auto spread = node.allocate<std::int64_t>(8, iso::placement::spread());
    auto single = node.allocate<std::int64_t>(8, iso::placement::on(node.count() - 1));
    auto locks = node.allocate<std::int64_t>(node.count(), iso::placement::spread());
    const iso::shared_array<std::int64_t> arrays[] = {shared, spread, single};
    std::vector<iso::value<std::int64_t>> keep;
    for (int i = 0; i < 300; ++i) {
      iso::isochron iso(node);
      const int ops = 1 + static_cast<int>(rng() % 4);
      for (int k = 0; k < ops; ++k) {
        const auto& a = arrays[rng() % 3];
        const auto var = a[rng() % a.size()];
        if (rng() % 2) {
          keep.push_back(iso.read(var));
        } else {
          iso.write(var, static_cast<std::int64_t>(rng() % 1000));
        }
      }
      // Every 25th isochron: hold our own lock variable (sched), release it next time.
      if (i % 25 == 0) iso.sched(locks[node.id()]);
      if (i % 25 == 1) iso.assign(locks[node.id()], static_cast<std::int64_t>(i));
      if (rng() % 5 == 0) keep.push_back(iso.read(locks[rng() % node.count()]));
      iso.end();
      // Now and then, once everything issued so far has executed here, lone reads: those
      // of another node's copy may be served as same-host reads. (Not right after a sched:
      // quiesce waits for reads that need every node's assign.)
      if (i % 25 == 5 || i % 25 == 15) {
        node.quiesce();
        for (int k = 0; k < 3; ++k) {
          iso::isochron lone(node);
          const auto& a = arrays[1 + rng() % 2];
          keep.push_back(lone.read(a[rng() % a.size()]));
        }
      }
    }
    for (const auto& v : keep) (void)v.get();
    node.quiesce();
    node.barrier();
    std::lock_guard lock(mu);
    all.insert(all.end(), node.trace().begin(), node.trace().end());
  });
  EXPECT_EQ(status, 0);
  return all;
}

// Reads in the history that were served from another node's window.
std::ptrdiff_t same_host_reads(const std::vector<iso::trace_event>& events) {
  return std::count_if(events.begin(), events.end(), [](const auto& e) { return e.direct; });
}

// Each node's isochrons, as executed anywhere, appear in its issue order.
void expect_issue_order(const std::vector<iso::trace_event>& events) {
  using place = std::tuple<std::uint64_t, bool, std::uint64_t>;
  std::map<std::uint32_t, std::map<std::uint64_t, place>> when;
  for (const auto& e : events) {
    const place at{e.pulse, e.after_pulse, e.step};
    auto [it, fresh] = when[e.issuer].emplace(e.issue_rank, at);
    if (!fresh) {
      EXPECT_EQ(it->second, at) << "isochron " << e.issue_rank << " of node " << e.issuer
                                << " ran at two logical times";
    }
  }
  for (const auto& [pid, ranks] : when) {
    place last{0, false, 0};
    for (const auto& [rank, at] : ranks) {
      EXPECT_LE(last, at) << "node " << pid << " isochron " << rank << " ran before an earlier one";
      last = at;
    }
  }
}

TEST(History, RandomWorkloadOnOneSwitchIsSequentiallyConsistent) {
  for (iso::nic_mode nic : {iso::nic_mode::inline_poll, iso::nic_mode::thread}) {
    iso::options opts;
    opts.nic = nic;
    const auto events = run_random_workload(3, opts, 1);
    const iso::sc::sc_report report = iso::sc::check_sequential_consistency(events);
    EXPECT_TRUE(report.consistent) << report.first_violation;
    EXPECT_GT(report.reads_checked, 500u);
    EXPECT_GT(report.changes, 500u);
    // The history holds same-host reads too (options::direct_reads is on by default).
    EXPECT_GT(same_host_reads(events), 10);
    expect_issue_order(events);
  }
}

TEST(History, RandomWorkloadOnThreeSwitchesIsSequentiallyConsistent) {
  char path[] = "/tmp/iso-topology-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  std::ofstream(path) << R"(
    switch { name: "left" node: 0 link: "middle" }
    switch { name: "middle" node: 1 link: "right" }
    switch { name: "right" node: 2 node: 3 }
  )";
  iso::options opts;
  opts.topology_file = path;
  const auto events = run_random_workload(4, opts, 2);
  ::unlink(path);
  const iso::sc::sc_report report = iso::sc::check_sequential_consistency(events);
  EXPECT_TRUE(report.consistent) << report.first_violation;
  EXPECT_GT(report.reads_checked, 500u);
  EXPECT_GT(same_host_reads(events), 10);
  expect_issue_order(events);
}

// Between pulses: every node writes its own variable in purely local isochrons and reads
// the others' from their windows, while now and then a write through the NIC moves logical
// time on. Such reads and writes are ordered by step (a Lamport clock the readers raise in
// their owners' windows) before node id; the history must replay consistently in that
// order, and the reads must not have needed a pulse each.
TEST(History, LocalWritesAndSameHostReadsBetweenPulsesAreSequentiallyConsistent) {
  constexpr int kNodes = 3;
  constexpr int kRounds = 400;
  for (iso::nic_mode nic : {iso::nic_mode::inline_poll, iso::nic_mode::thread}) {
    iso::options opts;
    opts.nic = nic;
    opts.trace = true;
    std::mutex mu;
    std::vector<iso::trace_event> events;
    std::atomic<std::uint64_t> most_pulses{0};
    const int status = iso::test::run_inproc(kNodes, opts, [&](iso::node& node) {
      std::vector<iso::shared_var<std::int64_t>> own;
      for (iso::node_id n = 0; n < kNodes; ++n) {
        own.push_back(node.allocate<std::int64_t>(1, iso::placement::on(n))[0]);
      }
      const auto everywhere = node.allocate<std::int64_t>(1, iso::placement::everywhere())[0];
      node.barrier();
      const std::uint64_t pulse_before = node.status().executed_pulse;
      for (std::int64_t k = 1; k <= kRounds; ++k) {
        {
          iso::isochron iso(node);
          iso.write(own[node.id()], k);
          if (k % 50 == 0) iso.write(everywhere, k * kNodes + node.id());
        }
        for (iso::node_id n = 1; n < kNodes; ++n) {
          (void)iso::test::read_alone(node, own[(node.id() + n) % kNodes]);
        }
      }
      std::uint64_t pulses = node.status().executed_pulse - pulse_before;
      std::uint64_t most = most_pulses.load();
      while (pulses > most && !most_pulses.compare_exchange_weak(most, pulses)) {
      }
      node.quiesce();
      node.barrier();
      std::lock_guard lock(mu);
      events.insert(events.end(), node.trace().begin(), node.trace().end());
    });
    ASSERT_EQ(status, 0);
    const iso::sc::sc_report report = iso::sc::check_sequential_consistency(events);
    EXPECT_TRUE(report.consistent) << report.first_violation;
    EXPECT_GT(same_host_reads(events), kNodes * kRounds);
    EXPECT_TRUE(
        std::any_of(events.begin(), events.end(), [](const auto& e) { return e.step > 0; }));
    expect_issue_order(events);
    EXPECT_LT(most_pulses.load(), kRounds / 2) << "pulses executed during the rounds";
  }
}

// The checker orders what ran between two pulses by step, then by node.
TEST(History, CheckerOrdersStepsBeforeNodes) {
  std::vector<iso::trace_event> events = {
      {.pulse = 1,
       .after_pulse = true,
       .step = 1,
       .pid = 0,
       .rank = 0,
       .op = iso::trace_op::read,
       .address = 5,
       .value = 9},
      {.pulse = 1,
       .after_pulse = true,
       .step = 0,
       .pid = 1,
       .rank = 0,
       .op = iso::trace_op::write,
       .address = 5,
       .value = 9},
  };
  EXPECT_TRUE(iso::sc::check_sequential_consistency(events).consistent);
  events[0].step = 0;
  EXPECT_FALSE(iso::sc::check_sequential_consistency(events).consistent);
}

// The checker itself must catch a history that is not sequentially consistent.
TEST(History, CheckerRejectsAStaleRead) {
  std::vector<iso::trace_event> events = {
      {.pulse = 1, .pid = 0, .rank = 0, .op = iso::trace_op::write, .address = 5, .value = 9},
      {.pulse = 2, .pid = 1, .rank = 0, .op = iso::trace_op::read, .address = 5, .value = 0},
  };
  EXPECT_FALSE(iso::sc::check_sequential_consistency(events).consistent);
  events[1].value = 9;
  EXPECT_TRUE(iso::sc::check_sequential_consistency(events).consistent);
}

TEST(History, CheckerHoldsReadsOfASchedToItsAssign) {
  std::vector<iso::trace_event> events = {
      {.pulse = 1, .pid = 0, .rank = 0, .op = iso::trace_op::sched, .address = 5},
      {.pulse = 2, .pid = 1, .rank = 0, .op = iso::trace_op::read, .address = 5, .value = 4},
      {.pulse = 3, .pid = 0, .rank = 1, .op = iso::trace_op::assign, .address = 5, .value = 7},
  };
  EXPECT_FALSE(iso::sc::check_sequential_consistency(events).consistent);
  events[1].value = 7;
  EXPECT_TRUE(iso::sc::check_sequential_consistency(events).consistent);
}

}  // namespace
