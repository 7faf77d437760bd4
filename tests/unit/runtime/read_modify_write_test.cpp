// Atomic read-modify-writes in isochrons (isochron::fetch_add, exchange, compare_exchange):
// applied at every copy at the isochron's logical time, the old value answered by the
// nearest copy. Each case runs with the NIC on its own thread and inline.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <vector>

#include "iso/iso.hpp"
#include "tests/support/inproc_job.hpp"

namespace {

using iso::test::run_inproc;

class ReadModifyWrite : public iso::test::nic_mode_test {};
INSTANTIATE_TEST_SUITE_P(NicModes, ReadModifyWrite, iso::test::both_nic_modes(),
                         iso::test::nic_mode_name);

std::int64_t read_alone(iso::node& node, iso::shared_var<std::int64_t> v) {
  iso::value<std::int64_t> r;
  {
    iso::isochron iso(node);
    r = iso.read(v);
  }
  return r.get();
}

// A counter every node increments, with one fetch_add isochron per increment: every value
// is taken exactly once, whatever the placement of the counter, and every copy ends equal.
void counter_case(const iso::options& o, iso::placement where) {
  constexpr int kNodes = 3;
  constexpr int kEach = 200;
  std::mutex mu;
  std::vector<std::int64_t> taken;
  std::atomic<int> wrong_final{0};
  const int status = run_inproc(kNodes, o, [&](iso::node& node) {
    auto counter = node.allocate<std::int64_t>(1, where)[0];
    node.barrier();
    std::vector<iso::value<std::int64_t>> mine;
    for (int k = 0; k < kEach; ++k) {
      iso::isochron iso(node);
      mine.push_back(iso.fetch_add(counter, 1));
    }
    std::vector<std::int64_t> values;
    values.reserve(mine.size());
    for (const auto& v : mine) values.push_back(v.get());
    // One node's increments execute in its issue order.
    EXPECT_TRUE(std::is_sorted(values.begin(), values.end()));
    node.barrier();
    if (read_alone(node, counter) != kNodes * kEach) ++wrong_final;
    std::lock_guard lock(mu);
    taken.insert(taken.end(), values.begin(), values.end());
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(wrong_final.load(), 0);
  std::sort(taken.begin(), taken.end());
  ASSERT_EQ(taken.size(), std::size_t{kNodes * kEach});
  for (std::size_t i = 0; i < taken.size(); ++i) ASSERT_EQ(taken[i], std::int64_t(i));
}

TEST_P(ReadModifyWrite, ACounterOnEveryNodeTakesEachValueOnce) {
  counter_case(opts(), iso::placement::everywhere());
}

TEST_P(ReadModifyWrite, ACounterOnOneNodeTakesEachValueOnce) {
  counter_case(opts(), iso::placement::on(1));
}

TEST_P(ReadModifyWrite, ACounterOnTwoOfThreeNodesTakesEachValueOnce) {
  counter_case(opts(), iso::placement::on({0, 2}));
}

// Operations of one isochron are atomic together: two increments of x in one isochron
// are consecutive, and a write of y beside them is seen with them, whatever other nodes
// interleave.
TEST_P(ReadModifyWrite, AnIsochronsOperationsAreAtomicTogether) {
  std::atomic<int> torn{0};
  const int status = run_inproc(2, opts(), [&](iso::node& node) {
    auto x = node.allocate<std::int64_t>(1)[0];
    auto y = node.allocate<std::int64_t>(1, iso::placement::on(1))[0];
    node.barrier();
    for (int k = 0; k < 300; ++k) {
      iso::value<std::int64_t> a;
      iso::value<std::int64_t> b;
      iso::value<std::int64_t> seen;
      {
        iso::isochron iso(node);
        a = iso.fetch_add(x, 1);
        iso.write(y, std::int64_t{node.id()} * 1000000 + k);
        b = iso.fetch_add(x, 1);
        seen = iso.read(y);
      }
      if (b.get() != a.get() + 1) ++torn;
      if (seen.get() != std::int64_t{node.id()} * 1000000 + k) ++torn;
    }
    node.barrier();
    EXPECT_EQ(read_alone(node, x), 2 * 2 * 300);
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(torn.load(), 0);
}

// compare_exchange as the building block of a lock-free increment: retried until it wins,
// it loses no update; exchange hands the variable on as a chain: every value stored is
// read exactly once by the next exchange (or stays at the end).
TEST_P(ReadModifyWrite, CompareExchangeAndExchangeLoseNothing) {
  constexpr int kNodes = 3;
  constexpr int kEach = 60;
  std::mutex mu;
  std::vector<std::int64_t> chain;
  std::atomic<int> failures{0};
  const int status = run_inproc(kNodes, opts(), [&](iso::node& node) {
    auto x = node.allocate<std::int64_t>(1, iso::placement::on(0))[0];
    auto token = node.allocate<std::int64_t>(1)[0];
    node.barrier();
    std::vector<std::int64_t> got;
    for (int k = 0; k < kEach; ++k) {
      for (;;) {
        const std::int64_t old = read_alone(node, x);
        iso::value<std::int64_t> r;
        {
          iso::isochron iso(node);
          r = iso.compare_exchange(x, old, old + 1);
        }
        if (r.get() == old) break;
        ++failures;  // someone else won: fine, try again
      }
      iso::value<std::int64_t> previous;
      {
        iso::isochron iso(node);
        previous = iso.exchange(token, std::int64_t{node.id()} * 1000 + k + 1);
      }
      got.push_back(previous.get());
    }
    node.barrier();
    EXPECT_EQ(read_alone(node, x), kNodes * kEach);
    const std::int64_t last = read_alone(node, token);
    std::lock_guard lock(mu);
    chain.insert(chain.end(), got.begin(), got.end());
    if (node.id() == 0) chain.push_back(last);
  });
  EXPECT_EQ(status, 0);
  // The values read by the exchanges, plus the last one left, are the initial 0 and every
  // value stored, each exactly once.
  std::vector<std::int64_t> expected{0};
  for (int n = 0; n < kNodes; ++n) {
    for (int k = 0; k < kEach; ++k) expected.push_back(n * 1000 + k + 1);
  }
  std::sort(expected.begin(), expected.end());
  std::sort(chain.begin(), chain.end());
  EXPECT_EQ(chain, expected);
}

// On a variable awaiting its assign, a fetch_add waits like a read and applies to the
// assigned value; every copy ends with the sum.
TEST_P(ReadModifyWrite, AFetchAddAfterASchedWaitsForTheAssign) {
  const int status = run_inproc(2, opts(), [&](iso::node& node) {
    auto x = node.allocate<std::int64_t>(1)[0];
    auto done = node.allocate<std::int64_t>(1)[0];
    node.barrier();
    if (node.id() == 0) {
      {
        iso::isochron iso(node);
        iso.sched(x);
      }
      node.barrier();  // node 1's fetch_add is issued after the sched
      node.barrier();
      while (read_alone(node, done) == 0) {
      }
      iso::isochron iso(node);
      iso.assign(x, 10);
    } else {
      node.barrier();
      iso::value<std::int64_t> old;
      {
        iso::isochron iso(node);
        old = iso.fetch_add(x, 5);
      }
      node.barrier();
      EXPECT_FALSE(old.ready()) << "answered before the assign";
      {
        iso::isochron iso(node);
        iso.write(done, 1);
      }
      EXPECT_EQ(old.get(), 10);
    }
    node.barrier();
    EXPECT_EQ(read_alone(node, x), 15);
  });
  EXPECT_EQ(status, 0);
}

// 32-bit variables wrap at 32 bits, signed and unsigned; compare_exchange compares bits.
TEST_P(ReadModifyWrite, ThirtyTwoBitVariablesWrap) {
  const int status = run_inproc(2, opts(), [&](iso::node& node) {
    auto u = node.allocate<std::uint32_t>(1, iso::placement::on(1))[0];
    auto s = node.allocate<std::int32_t>(1)[0];
    auto d = node.allocate<double>(1)[0];
    node.barrier();
    if (node.id() == 0) {
      iso::value<std::uint32_t> a;
      iso::value<std::uint32_t> b;
      iso::value<std::int32_t> c;
      iso::value<std::int32_t> e;
      iso::value<double> f;
      iso::value<double> g;
      {
        iso::isochron iso(node);
        iso.write(u, 0xfffffffeu);
        a = iso.fetch_add(u, 3);
        b = iso.fetch_add(u, 0);
        iso.write(s, -2);
        c = iso.fetch_add(s, -2147483647);
        e = iso.exchange(s, 7);
        iso.write(d, 1.5);
        f = iso.compare_exchange(d, 2.5, 9.0);  // fails: d is 1.5
        g = iso.compare_exchange(d, 1.5, 3.25);
      }
      EXPECT_EQ(a.get(), 0xfffffffeu);
      EXPECT_EQ(b.get(), 1u);
      EXPECT_EQ(c.get(), -2);
      EXPECT_EQ(e.get(), 2147483647);  // -2 - 2147483647 wraps
      EXPECT_EQ(f.get(), 1.5);
      EXPECT_EQ(g.get(), 1.5);
    }
    node.barrier();
    iso::value<double> dv;
    iso::value<std::int32_t> sv;
    {
      iso::isochron iso(node);
      dv = iso.read(d);
      sv = iso.read(s);
    }
    EXPECT_EQ(dv.get(), 3.25);
    EXPECT_EQ(sv.get(), 7);
  });
  EXPECT_EQ(status, 0);
}

// The history: at every copy the read-modify-writes of a counter form one chain (each
// read the value the previous one stored), and every copy has the same chain.
TEST_P(ReadModifyWrite, EveryCopyAppliesTheSameChain) {
  iso::options o = opts();
  o.trace = true;
  std::mutex mu;
  std::map<std::uint32_t, std::vector<std::pair<std::uint64_t, std::uint64_t>>> chains;
  const int status = run_inproc(3, o, [&](iso::node& node) {
    auto x = node.allocate<std::int64_t>(1)[0];
    node.barrier();
    for (int k = 0; k < 100; ++k) {
      iso::isochron iso(node);
      (void)iso.fetch_add(x, node.id() + 1);
    }
    node.barrier();
    std::vector<std::pair<std::uint64_t, std::uint64_t>> chain;
    for (const iso::trace_event& e : node.trace()) {
      if (e.op == iso::trace_op::fetch_add && e.address == x.where()) {
        chain.emplace_back(e.value, e.stored);
      }
    }
    std::lock_guard lock(mu);
    chains[node.id()] = chain;
  });
  EXPECT_EQ(status, 0);
  ASSERT_EQ(chains.size(), 3u);
  const auto& first = chains.begin()->second;
  ASSERT_EQ(first.size(), 300u);
  std::uint64_t value = 0;
  for (const auto& [old, stored] : first) {
    EXPECT_EQ(old, value);
    EXPECT_GT(stored, old);
    value = stored;
  }
  EXPECT_EQ(value, 100u * (1 + 2 + 3));
  for (const auto& [node, chain] : chains) EXPECT_EQ(chain, first) << "node " << node;
}

}  // namespace
