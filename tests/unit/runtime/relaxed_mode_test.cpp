// Relaxed mode (options::relaxed, node::set_relaxed) as inproc jobs: only a job that asked
// for it may switch it on; it switches both ways between barriers; what it does not give
// up keeps working in it (read-modify-writes stay atomic, sched/assign, messages, barriers
// complete); and the copies of a variable written by several nodes at once agree again
// after a barrier. Its effect on the outcomes of litmus tests is tested with iso-litmus
// (tests/multiproc: litmus_relaxed_*).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "iso/iso.hpp"
#include "tests/support/inproc_job.hpp"
#include "tests/support/test_support.hpp"

namespace {

using iso::test::expect_error;
using iso::test::run_inproc;

iso::options bounded(bool relaxed) {
  iso::options o;
  o.barrier_timeout = std::chrono::seconds(30);
  o.relaxed = relaxed;
  return o;
}

TEST(RelaxedMode, AJobThatDidNotAskForItCannotSwitchItOn) {
  const int status = run_inproc(2, bounded(false), [&](iso::node& node) {
    EXPECT_FALSE(node.relaxed());
    expect_error(iso::error_code::failed_precondition, "without options::relaxed",
                 [&] { node.set_relaxed(true); });
    EXPECT_FALSE(node.relaxed());
    node.set_relaxed(false);  // already off: nothing to refuse
    EXPECT_FALSE(node.relaxed());
  });
  EXPECT_EQ(status, 0);
}

TEST(RelaxedMode, SwitchesBothWaysOutsideIsochrons) {
  iso::test::allow_log_lines_in_this_test();  // every node warns that it runs relaxed
  const int status = run_inproc(2, bounded(true), [&](iso::node& node) {
    iso::shared_array<std::int64_t> x = node.allocate<std::int64_t>(2);
    EXPECT_TRUE(node.relaxed());
    {
      iso::isochron iso(node);
      expect_error(iso::error_code::failed_precondition, "set_relaxed() inside an open isochron",
                   [&] { node.set_relaxed(false); });
      iso.write(x[node.id()], 1);
    }
    EXPECT_TRUE(node.relaxed());
    node.barrier();
    node.set_relaxed(false);
    EXPECT_FALSE(node.relaxed());
    node.barrier();
    EXPECT_EQ(iso::test::read_alone(node, x[1 - node.id()]), 1);
    node.set_relaxed(true);
    EXPECT_TRUE(node.relaxed());
  });
  EXPECT_EQ(status, 0);
}

// Fetch-adds run at their logical time in relaxed mode too: none is lost. Sched and assign,
// messages and barriers complete.
TEST(RelaxedMode, WhatItDoesNotGiveUpStillWorks) {
  iso::test::allow_log_lines_in_this_test();
  constexpr int kRounds = 200;
  const int status = run_inproc(3, bounded(true), [&](iso::node& node) {
    iso::shared_array<std::int64_t> v = node.allocate<std::int64_t>(2);
    const iso::shared_var<std::int64_t> counter = v[0];
    const iso::shared_var<std::int64_t> handed = v[1];
    for (int i = 0; i < kRounds; ++i) {
      iso::isochron iso(node);
      (void)iso.fetch_add(counter, 1);
    }
    if (node.id() == 0) {
      iso::isochron s(node);
      s.sched(handed);
      s.end();
      iso::isochron a(node);
      a.assign(handed, 42);
      a.end();
    }
    const std::int64_t got = iso::test::read_alone(node, handed);
    EXPECT_TRUE(got == 0 || got == 42) << got;
    {
      iso::isochron m(node);
      const std::byte hello{7};
      m.send((node.id() + 1) % node.count(), std::span(&hello, 1));
    }
    const iso::notice n = node.iso_receive();
    EXPECT_EQ(n.bytes.size(), 1u);
    node.barrier();
    EXPECT_EQ(iso::test::read_alone(node, counter), 3 * kRounds);
    EXPECT_EQ(iso::test::read_alone(node, handed), 42);
  });
  EXPECT_EQ(status, 0);
}

// Every node writes the same variable in each round, with its own value. Applied in arrival
// order, the copies could end up holding different values; applied once more at their
// logical time, they agree after the barrier (on the value of the last write in the global
// order).
TEST(RelaxedMode, CopiesAgreeAfterABarrier) {
  iso::test::allow_log_lines_in_this_test();
  constexpr int kRounds = 100;
  const int status = run_inproc(3, bounded(true), [&](iso::node& node) {
    iso::shared_array<std::int64_t> y = node.allocate<std::int64_t>(kRounds);
    for (int i = 0; i < kRounds; ++i) {
      iso::isochron iso(node);
      iso.write(y[i], 1 + node.id());
    }
    node.barrier();
    std::vector<std::int64_t> mine(kRounds);
    for (int i = 0; i < kRounds; ++i) mine[i] = iso::test::read_alone(node, y[i]);
    if (node.id() != 0) {
      node.send(0, std::as_bytes(std::span(mine)));
    } else {
      for (std::uint32_t k = 1; k < node.count(); ++k) {
        iso::message m = node.receive();
        ASSERT_EQ(m.bytes().size(), mine.size() * sizeof(std::int64_t));
        std::vector<std::int64_t> theirs(kRounds);
        std::memcpy(theirs.data(), m.bytes().data(), m.bytes().size());
        EXPECT_EQ(theirs, mine) << "node " << m.source() << "'s copies differ from node 0's";
      }
    }
    node.barrier();
  });
  EXPECT_EQ(status, 0);
}

}  // namespace
