// Run by isorun as 3 processes with NICs on threads of their own (ISO_NIC=thread): the
// NIC's counters and remote store between real processes, while the holder's or the
// target's host is busy elsewhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "runtime/node_state.hpp"
#include "tests/support/job_test.hpp"

namespace {

std::vector<std::byte> pattern(std::size_t n, std::uint32_t seed) {
  std::vector<std::byte> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = std::byte((i * 29 + seed * 13 + (i >> 9)) & 0xff);
  return out;
}

// Every node takes numbers from a counter held by node 0 until they run out, node 0
// included; node 0 also stays out of the runtime for a second first. Nodes 1 and 2 go
// through the NICs, as from other hosts (on this host they could add to the counter's word
// themselves, and would never need node 0's NIC); node 0 adds directly. Node 0 gathers
// what everyone took: every number exactly once.
TEST(OnesidedJob, EveryCounterValueIsHandedOutOnce) {
  iso::node& node = iso::test::job_node();
  ASSERT_EQ(node.count(), 3u) << "run with isorun -n 3";
  constexpr std::uint64_t kTotal = 3000;
  const iso::counter jobs = node.allocate_counter(0);
  iso::detail::node_state::of(node).set_same_host_counters(node.id() == 0);
  node.barrier();
  if (node.id() == 0) std::this_thread::sleep_for(std::chrono::seconds(1));  // a busy host
  std::vector<std::uint64_t> mine;
  for (;;) {
    const std::uint64_t v = node.fetch_add(jobs, 1).get();
    if (v >= kTotal) break;
    mine.push_back(v);
  }
  EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end()));
  if (node.id() != 0) {
    // While node 0 slept, the others took numbers: they need not wait for it.
    EXPECT_FALSE(mine.empty());
    node.send(0, std::as_bytes(std::span(mine)));
  } else {
    std::vector<std::uint64_t> all = mine;
    for (int i = 1; i < 3; ++i) {
      const iso::message m = node.receive();
      const std::size_t n = m.bytes().size() / sizeof(std::uint64_t);
      const std::size_t at = all.size();
      all.resize(at + n);
      std::memcpy(all.data() + at, m.bytes().data(), m.bytes().size());
    }
    std::sort(all.begin(), all.end());
    ASSERT_EQ(all.size(), kTotal);
    for (std::uint64_t i = 0; i < kTotal; ++i) ASSERT_EQ(all[i], i);
  }
  node.barrier();
}

// Every node puts to every node's window (sizes up to several transport packets), fences,
// and passes a barrier; each target checks what arrived, and gets read back. Node 2 is out
// of the runtime for a second while the others put to it and get from it. Under
// ThreadSanitizer this checks the memory model of iso/window.hpp: the barrier orders the
// NIC's writes before the host's reads, and the host's reads before the next round's puts.
TEST(OnesidedJob, PutsFencesAndGetsBetweenProcesses) {
  iso::node& node = iso::test::job_node();
  constexpr std::size_t kSlot = 1 << 18;
  const iso::window w = node.register_window(3 * kSlot);
  node.barrier();
  const std::vector<std::size_t> sizes = {8, 1000, 70000, kSlot};
  if (node.id() == 2) std::this_thread::sleep_for(std::chrono::seconds(1));  // a busy host
  for (const std::size_t n : sizes) {
    const std::vector<std::byte> mine = pattern(n, node.id() + n);
    for (iso::node_id t = 0; t < 3; ++t) node.put(w, t, node.id() * kSlot, mine);
    node.fence();
    for (iso::node_id t = 0; t < 3; ++t) {
      const iso::remote_bytes back = node.get(w, t, node.id() * kSlot, n);
      ASSERT_TRUE(std::equal(back.get().begin(), back.get().end(), mine.begin()))
          << n << " bytes at node " << t;
    }
    node.barrier();
    for (iso::node_id from = 0; from < 3; ++from) {
      const std::vector<std::byte> want = pattern(n, from + n);
      std::span<const std::byte> here = node.local(w).subspan(from * kSlot, n);
      ASSERT_TRUE(std::equal(here.begin(), here.end(), want.begin())) << n << " from " << from;
    }
    node.barrier();
  }
}

}  // namespace
