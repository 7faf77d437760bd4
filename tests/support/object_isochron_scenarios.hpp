// Object writes inside isochrons (iso::object::start(isochron&, ...)), run both in one
// process (tests/unit/runtime/object_isochron_test.cpp) and as a job of processes
// (tests/multiproc/object_isochron_job_test.cpp). Collective: every node calls it, in a
// job whose objects order is isotach.
//
// The transfer: one isochron takes 1 from account `from` (inc(-1)), gives 1 to account `to`
// (inc(+1)) and counts it in the shared variable `count` (fetch_add 1). After its transfers,
// and between them, every node reads the variable, then `from` and `to` on its own
// replica, then the variable again. Were any part of a transfer seen without the rest, some
// node would see the accounts and the count disagree:
//   - the results of one transfer fit exactly: the count before it is c, `from` ends at
//     -(c + 1) and `to` at c + 1 (no other write came between them, anywhere);
//   - the reads, in program order, never go back: count <= -from <= to <= count again.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>

#include "iso/iso.hpp"
#include "tests/support/object_types.hpp"

namespace iso::test {

inline void transfers_are_never_seen_in_part(iso::node& node, std::int64_t transfers) {
  const iso::object_type int_type = iso::test::make_int_type();
  iso::object from(node, int_type, {.placement = iso::object_placement::replicated});
  iso::object to(node, int_type, {.placement = iso::object_placement::replicated});
  const iso::shared_var<std::int64_t> count = node.allocate<std::int64_t>(1)[0];
  node.barrier();
  const std::int64_t total = transfers * node.count();
  const auto read_count = [&] {
    iso::value<std::int64_t> v = [&] {
      iso::isochron in(node);
      return in.read(count);
    }();
    return v.get();
  };
  // One observation; returns the count it saw last.
  const auto observe = [&] {
    const std::int64_t before = read_count();
    const std::int64_t taken = -from.read<std::int64_t>(int_ops::kValue);
    const std::int64_t given = to.read<std::int64_t>(int_ops::kValue);
    const std::int64_t after = read_count();
    EXPECT_LE(before, taken) << "node " << node.id() << " read the count before the accounts";
    EXPECT_LE(taken, given) << "node " << node.id() << " saw a transfer taken but not given";
    EXPECT_LE(given, after) << "node " << node.id() << " saw the accounts before the count";
    return after;
  };
  for (std::int64_t k = 0; k < transfers; ++k) {
    iso::pending<std::int64_t> taken;
    iso::pending<std::int64_t> given;
    iso::value<std::int64_t> before;
    {
      iso::isochron in(node);
      taken = from.start<std::int64_t>(in, int_ops::kInc, std::int64_t{-1});
      given = to.start<std::int64_t>(in, int_ops::kInc, std::int64_t{1});
      before = in.fetch_add(count, 1);
    }
    const std::int64_t c = before.get();
    EXPECT_EQ(taken.get(), -(c + 1)) << "node " << node.id() << ", transfer " << k;
    EXPECT_EQ(given.get(), c + 1) << "node " << node.id() << ", transfer " << k;
    (void)observe();
  }
  // Readers go on while the others still transfer.
  while (observe() < total) {
  }
  node.barrier();
  EXPECT_EQ(read_count(), total);
  EXPECT_EQ(from.read<std::int64_t>(int_ops::kValue), -total) << "node " << node.id();
  EXPECT_EQ(to.read<std::int64_t>(int_ops::kValue), total) << "node " << node.id();
  EXPECT_EQ(from.writes_applied(), static_cast<std::uint64_t>(total)) << "node " << node.id();
  EXPECT_EQ(to.writes_applied(), static_cast<std::uint64_t>(total)) << "node " << node.id();
}

}  // namespace iso::test
