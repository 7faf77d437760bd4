// The NIC's one-sided services through the public API, in in-process jobs: counters
// (node::fetch_add, iso/counter.hpp) and remote store (node::put/get/fence, iso/window.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <numeric>
#include <thread>
#include <vector>

#include "iso/iso.hpp"
#include "runtime/node_state.hpp"
#include "tests/support/inproc_job.hpp"
#include "tests/support/test_support.hpp"

namespace {

using iso::test::run_inproc;

class Onesided : public iso::test::nic_mode_test {};
INSTANTIATE_TEST_SUITE_P(NicModes, Onesided, iso::test::both_nic_modes(), iso::test::nic_mode_name);

// The error code of `f`'s iso::error; `unknown` when it throws none.
template <typename F>
iso::error_code code_of(F&& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const iso::error& e) {
    if (message != nullptr) *message = e.what();
    return e.code();
  }
  return iso::error_code::unknown;
}

// Bytes that differ by position and by seed, so that a misplaced or stale byte shows.
std::vector<std::byte> pattern(std::size_t n, std::uint32_t seed) {
  std::vector<std::byte> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = std::byte((i * 131 + seed * 7 + (i >> 8)) & 0xff);
  return out;
}

// Every node takes numbers from counters on two nodes, as fast as it can, with several
// answers outstanding: every value of each counter is handed out exactly once.
TEST_P(Onesided, EveryCounterValueIsHandedOutOnce) {
  constexpr int kNodes = 6;
  constexpr int kEach = 400;
  std::mutex mu;
  std::vector<std::vector<std::uint64_t>> taken(2);
  const int status = run_inproc(kNodes, opts(), [&](iso::node& node) {
    const iso::counter a = node.allocate_counter(0);
    const iso::counter b = node.allocate_counter(kNodes - 1);
    EXPECT_NE(a, b);
    std::vector<std::uint64_t> mine_a, mine_b;
    std::vector<iso::value<std::uint64_t>> pending;
    for (int k = 0; k < kEach; ++k) {
      pending.push_back(node.fetch_add(a, 1));
      pending.push_back(node.fetch_add(b, 3));
      if (pending.size() >= 8) {
        for (std::size_t i = 0; i < pending.size(); ++i) {
          (i % 2 == 0 ? mine_a : mine_b).push_back(pending[i].get());
        }
        pending.clear();
      }
    }
    for (std::size_t i = 0; i < pending.size(); ++i) {
      (i % 2 == 0 ? mine_a : mine_b).push_back(pending[i].get());
    }
    // One node's adds to one counter apply in the order it made them.
    EXPECT_TRUE(std::is_sorted(mine_a.begin(), mine_a.end()));
    EXPECT_TRUE(std::is_sorted(mine_b.begin(), mine_b.end()));
    std::lock_guard lock(mu);
    taken[0].insert(taken[0].end(), mine_a.begin(), mine_a.end());
    taken[1].insert(taken[1].end(), mine_b.begin(), mine_b.end());
  });
  ASSERT_EQ(status, 0);
  for (int c = 0; c < 2; ++c) {
    std::sort(taken[c].begin(), taken[c].end());
    ASSERT_EQ(taken[c].size(), std::size_t{kNodes * kEach});
    const std::uint64_t step = c == 0 ? 1 : 3;
    for (std::size_t i = 0; i < taken[c].size(); ++i) ASSERT_EQ(taken[c][i], i * step) << c;
  }
}

// One counter, two paths at once: nodes 0 and 1 add with a CPU atomic in the holder's
// window (same host: the answer is there at once), nodes 2 and 3 go through the NICs as
// from another host, and the holder's NIC adds to the same word. Every value is handed out
// exactly once, and each node's values rise.
TEST_P(Onesided, SameHostAndNicPathsTogetherHandOutEveryValueOnce) {
  constexpr int kNodes = 4;
  constexpr int kEach = 1000;
  std::mutex mu;
  std::vector<std::uint64_t> taken;
  const int status = run_inproc(kNodes, opts(), [&](iso::node& node) {
    const iso::counter c = node.allocate_counter(1);
    const bool same_host = node.id() < 2;
    iso::detail::node_state::of(node).set_same_host_counters(same_host);
    node.barrier();
    std::vector<std::uint64_t> mine;
    std::vector<iso::value<std::uint64_t>> pending;
    for (int k = 0; k < kEach; ++k) {
      pending.push_back(node.fetch_add(c, 1));
      if (same_host) {
        EXPECT_TRUE(pending.back().ready()) << "node " << node.id() << " went through the NIC";
      }
      if (pending.size() == 4 || k == kEach - 1) {
        for (const iso::value<std::uint64_t>& v : pending) mine.push_back(v.get());
        pending.clear();
      }
    }
    EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end()));
    std::lock_guard lock(mu);
    taken.insert(taken.end(), mine.begin(), mine.end());
  });
  ASSERT_EQ(status, 0);
  std::sort(taken.begin(), taken.end());
  ASSERT_EQ(taken.size(), std::size_t{kNodes * kEach});
  for (std::size_t i = 0; i < taken.size(); ++i) ASSERT_EQ(taken[i], i);
}

// The holder's host sleeps for a second without any runtime call; with its NIC on a thread
// of its own, the others (as if on other hosts: through the NICs) get every answer
// meanwhile.
TEST(OnesidedThreadNic, CounterAnswersDoNotWaitForTheHoldersHost) {
  constexpr int kNodes = 4;
  constexpr int kEach = 200;
  iso::options o;
  o.nic = iso::nic_mode::thread;
  std::atomic<bool> holder_awake{false};
  std::atomic<int> finished_while_asleep{0};
  std::mutex mu;
  std::vector<std::uint64_t> taken;
  const int status = run_inproc(kNodes, o, [&](iso::node& node) {
    const iso::counter jobs = node.allocate_counter(0);
    iso::detail::node_state::of(node).set_same_host_counters(false);
    node.barrier();
    if (node.id() == 0) {
      std::this_thread::sleep_for(std::chrono::seconds(1));  // the scenario: a busy host
      holder_awake = true;
    } else {
      std::vector<std::uint64_t> mine;
      mine.reserve(kEach);
      for (int k = 0; k < kEach; ++k) mine.push_back(node.fetch_add(jobs, 1).get());
      if (!holder_awake) ++finished_while_asleep;
      std::lock_guard lock(mu);
      taken.insert(taken.end(), mine.begin(), mine.end());
    }
    node.barrier();
  });
  ASSERT_EQ(status, 0);
  EXPECT_EQ(finished_while_asleep, kNodes - 1) << "answers waited for the holder's host";
  std::sort(taken.begin(), taken.end());
  ASSERT_EQ(taken.size(), std::size_t{(kNodes - 1) * kEach});
  for (std::size_t i = 0; i < taken.size(); ++i) ASSERT_EQ(taken[i], i);
}

// A counter that does not exist, or of a node outside the job: invalid_argument naming
// it, and nothing reaches any counter (the real one still starts at 0).
TEST_P(Onesided, BadCountersAreRefusedBeforeAnythingIsSent) {
  const int status = run_inproc(3, opts(), [&](iso::node& node) {
    std::string why;
    EXPECT_EQ(code_of([&] { (void)node.allocate_counter(3); }, &why),
              iso::error_code::invalid_argument);
    EXPECT_NE(why.find("nodes 0..2"), std::string::npos) << why;
    const iso::counter real = node.allocate_counter(1);
    EXPECT_EQ(code_of([&] { (void)node.fetch_add(iso::counter(), 1); }, &why),
              iso::error_code::invalid_argument);
    EXPECT_NE(why.find("default-constructed"), std::string::npos) << why;
    EXPECT_EQ(code_of([&] { (void)node.fetch_add(iso::counter(1, 1), 1); }, &why),
              iso::error_code::invalid_argument);
    EXPECT_NE(why.find("no such counter"), std::string::npos) << why;
    EXPECT_EQ(code_of([&] { (void)node.fetch_add(iso::counter(2, real.index()), 1); }, &why),
              iso::error_code::invalid_argument);
    EXPECT_NE(why.find("held by node 1"), std::string::npos) << why;
    EXPECT_EQ(code_of([&] { (void)node.fetch_add(iso::counter(7, real.index()), 1); }, &why),
              iso::error_code::invalid_argument);
    EXPECT_NE(why.find("nodes 0..2"), std::string::npos) << why;
    node.barrier();
    if (node.id() == 0) {
      EXPECT_EQ(node.fetch_add(iso::counter(1, real.index()), 0).get(), 0u);
    }
    node.barrier();
  });
  EXPECT_EQ(status, 0);
}

// A dropped answer handle frees its slot when the answer comes; one taken inside an open
// isochron is not part of it.
TEST_P(Onesided, FetchAddHandlesMayBeDroppedAndUsedInsideIsochrons) {
  const int status = run_inproc(2, opts(), [&](iso::node& node) {
    const iso::counter c = node.allocate_counter(1);
    auto x = node.allocate<std::int64_t>(1)[0];
    if (node.id() == 0) {
      for (int i = 0; i < 100; ++i) (void)node.fetch_add(c, 1);
      iso::value<std::uint64_t> v;
      {
        iso::isochron iso(node);
        iso.write(x, 1);
        v = node.fetch_add(c, 1);
      }
      EXPECT_EQ(v.get(), 100u);
    }
    node.barrier();
  });
  EXPECT_EQ(status, 0);
}

// Puts of many sizes (one byte, unaligned, one transport packet and more, most of a
// message) to every other node and to this one, then a fence and a barrier: every target
// holds exactly the bytes, and gets of every size return them.
TEST_P(Onesided, PutsAndGetsOfManySizes) {
  constexpr int kNodes = 3;
  const std::vector<std::size_t> sizes = {1, 7, 8, 9, 100, 4096, 65536, 200000, 1000000};
  const std::size_t slot = 1 << 20;  // each sender writes its own part of the window
  const int status = run_inproc(kNodes, opts(), [&](iso::node& node) {
    const iso::window w = node.register_window(kNodes * slot + 64);
    EXPECT_EQ(w.size(), kNodes * slot + 64);
    std::vector<std::byte> zeros(w.size());
    EXPECT_TRUE(std::equal(node.local(w).begin(), node.local(w).end(), zeros.begin()));
    node.barrier();  // nobody puts before every node has looked
    for (const std::size_t n : sizes) {
      ASSERT_LE(n, node.max_message_size());
      const std::vector<std::byte> mine = pattern(n, node.id() * 1000 + n);
      for (iso::node_id t = 0; t < kNodes; ++t) {
        node.put(w, t, node.id() * slot + 3, mine);  // offset 3: unaligned
      }
      node.fence();
      node.barrier();
      for (iso::node_id from = 0; from < kNodes; ++from) {
        const std::vector<std::byte> want = pattern(n, from * 1000 + n);
        std::span<const std::byte> here = node.local(w).subspan(from * slot + 3, n);
        ASSERT_TRUE(std::equal(here.begin(), here.end(), want.begin()))
            << n << " bytes from node " << from;
        const iso::remote_bytes got = node.get(w, (node.id() + from) % kNodes, from * slot + 3, n);
        ASSERT_EQ(got.get().size(), n);
        ASSERT_TRUE(std::equal(got.get().begin(), got.get().end(), want.begin()))
            << "get of " << n << " bytes from node " << (node.id() + from) % kNodes;
      }
      node.barrier();  // nobody overwrites what another still checks
    }
    const iso::remote_bytes none = node.get(w, 0, 0, 0);
    EXPECT_TRUE(none.get().empty());
  });
  EXPECT_EQ(status, 0);
}

// The fence: after it, a plain message tells the target, which finds every earlier put in
// its window without a barrier. A get sees its own node's earlier puts without a fence.
TEST_P(Onesided, AFenceMakesEveryEarlierPutVisible) {
  constexpr int kPuts = 300;
  const int status = run_inproc(2, opts(), [&](iso::node& node) {
    const iso::window w = node.register_window(kPuts * 8);
    if (node.id() == 0) {
      for (std::uint64_t i = 0; i < kPuts; ++i) {
        const std::uint64_t v = i * i + 1;
        node.put(w, 1, i * 8, std::as_bytes(std::span(&v, 1)));
      }
      const iso::remote_bytes last = node.get(w, 1, (kPuts - 1) * 8, 8);
      std::uint64_t v = 0;
      std::memcpy(&v, last.get().data(), 8);
      EXPECT_EQ(v, std::uint64_t{(kPuts - 1) * (kPuts - 1) + 1});
      for (std::uint64_t i = 0; i < kPuts; ++i) {
        const std::uint64_t v2 = i + 7;
        node.put(w, 1, i * 8, std::as_bytes(std::span(&v2, 1)));
      }
      node.fence();
      const int go = 1;
      node.send(1, std::as_bytes(std::span(&go, 1)));
    } else {
      (void)node.receive();
      std::span<const std::byte> mine = node.local(w);
      for (std::uint64_t i = 0; i < kPuts; ++i) {
        std::uint64_t v = 0;
        std::memcpy(&v, mine.data() + i * 8, 8);
        ASSERT_EQ(v, i + 7) << "put " << i << " not visible after the fence";
      }
    }
    node.barrier();
  });
  EXPECT_EQ(status, 0);
}

// The target's host sleeps for a second; with NICs on threads of their own, puts, a fence
// and gets to it complete meanwhile.
TEST(OnesidedThreadNic, PutsAndGetsDoNotWaitForTheTargetsHost) {
  iso::options o;
  o.nic = iso::nic_mode::thread;
  std::atomic<bool> target_awake{false};
  std::atomic<bool> done_while_asleep{false};
  const int status = run_inproc(2, o, [&](iso::node& node) {
    const iso::window w = node.register_window(1 << 17);
    node.barrier();
    if (node.id() == 1) {
      std::this_thread::sleep_for(std::chrono::seconds(1));  // the scenario: a busy host
      target_awake = true;
    } else {
      const std::vector<std::byte> big = pattern(100000, 5);
      node.put(w, 1, 17, big);
      node.fence();
      const iso::remote_bytes back = node.get(w, 1, 17, big.size());
      EXPECT_TRUE(std::equal(back.get().begin(), back.get().end(), big.begin()));
      done_while_asleep = !target_awake;
    }
    node.barrier();
  });
  EXPECT_EQ(status, 0);
  EXPECT_TRUE(done_while_asleep) << "the put, fence or get waited for the target's host";
}

// Bad windows, targets, offsets and sizes: precise errors, and nothing written anywhere.
TEST_P(Onesided, BadAccessesAreRefusedBeforeAnythingIsSent) {
  const int status = run_inproc(2, opts(), [&](iso::node& node) {
    const iso::window w = node.register_window(100);
    const std::vector<std::byte> ten = pattern(10, 1);
    std::string why;
    EXPECT_EQ(code_of([&] { node.put(iso::window(), 1, 0, ten); }, &why),
              iso::error_code::invalid_argument);
    EXPECT_NE(why.find("default-constructed"), std::string::npos) << why;
    EXPECT_EQ(code_of([&] { node.put(w, 2, 0, ten); }, &why), iso::error_code::invalid_argument);
    EXPECT_NE(why.find("nodes 0..1"), std::string::npos) << why;
    EXPECT_EQ(code_of([&] { node.put(w, 1, 91, ten); }, &why), iso::error_code::out_of_range);
    EXPECT_NE(why.find("10 bytes at offset 91 of window 0: outside its 100 bytes"),
              std::string::npos)
        << why;
    EXPECT_EQ(code_of([&] { node.put(w, 1, 101, {}); }, &why), iso::error_code::out_of_range);
    EXPECT_EQ(code_of([&] { node.put(w, 1, ~std::size_t{0} - 2, ten); }, &why),
              iso::error_code::out_of_range);
    EXPECT_EQ(code_of([&] { (void)node.get(w, 1, 95, 6); }, &why), iso::error_code::out_of_range);
    EXPECT_EQ(code_of([&] { (void)node.get(iso::window(), 0, 0, 1); }, &why),
              iso::error_code::invalid_argument);
    EXPECT_EQ(code_of([&] { (void)node.get(w, 5, 0, 1); }, &why),
              iso::error_code::invalid_argument);
    EXPECT_EQ(code_of([&] { (void)node.register_window(0); }, &why),
              iso::error_code::invalid_argument);
    // Above the message size, in a window large enough.
    const iso::window big = node.register_window(node.max_message_size() + 16);
    std::vector<std::byte> too_many(node.max_message_size() + 1);
    EXPECT_EQ(code_of([&] { node.put(big, 1, 0, too_many); }, &why), iso::error_code::out_of_range);
    EXPECT_NE(why.find("at most"), std::string::npos) << why;
    node.put(w, 1 - node.id(), 90, ten);  // the last ten bytes: in bounds
    node.fence();
    node.barrier();
    std::span<const std::byte> mine = node.local(w);
    EXPECT_TRUE(std::all_of(mine.begin(), mine.begin() + 90, [](std::byte b) {
      return b == std::byte{0};
    })) << "a refused put wrote";
    EXPECT_TRUE(std::equal(ten.begin(), ten.end(), mine.begin() + 90));
    EXPECT_TRUE(std::all_of(node.local(big).begin(), node.local(big).end(),
                            [](std::byte b) { return b == std::byte{0}; }));
    node.barrier();
  });
  EXPECT_EQ(status, 0);
}

// Nodes that register different sizes fail the job instead of going on with different
// views of the window.
TEST(OnesidedWindows, NodesThatDisagreeOnASizeFailTheJob) {
  iso::test::allow_log_lines_in_this_test();
  iso::options o;
  o.barrier_timeout = std::chrono::seconds(20);
  const int status = run_inproc(
      2, o, [&](iso::node& node) { (void)node.register_window(node.id() == 0 ? 64 : 128); });
  EXPECT_NE(status, 0);
}

}  // namespace
