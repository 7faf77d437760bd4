// Remote store as a NIC service (nicfw/remote_store_service.hpp), on engines over the
// inproc transport with fake hosts: what the service promises its hosts, including the
// refusals that the public API's checks keep from ever happening.
#include "nicfw/remote_store_service.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "comm/inproc.hpp"
#include "nicfw/engine.hpp"

namespace iso::nicfw {
namespace {

struct store_cluster {
  std::vector<std::unique_ptr<engine>> nics;
  std::vector<std::vector<std::byte>> memory;  // window 0 of each node
  // What each host was delivered, by kind.
  std::vector<std::vector<std::vector<std::byte>>> gets, refusals;
  std::vector<std::uint64_t> fences_done, registered;

  store_cluster(std::uint32_t n, bool own_thread, std::size_t window_bytes) {
    auto topo = std::make_shared<topology>(topology::single_switch(n));
    auto transports = comm::make_inproc_fabric(n, {.ring_capacity = 1 << 16});
    EXPECT_TRUE(transports.ok());
    memory.assign(n, std::vector<std::byte>(window_bytes));
    gets.resize(n);
    refusals.resize(n);
    fences_done.assign(n, 0);
    registered.assign(n, 0);
    for (comm::node_id i = 0; i < n; ++i) {
      nics.push_back(std::make_unique<engine>(i, topo, std::move((*transports)[i]),
                                              engine_options{.own_thread = own_thread,
                                                             .local_nodes = n,
                                                             .local_index = i,
                                                             .host_queue_bytes = 1 << 22}));
      nics.back()->add_service(std::make_unique<remote_store_service>(nics.back()->context()),
                               remote_store_service::kBinding);
    }
    for (auto& nic : nics) nic->start();
    for (comm::node_id i = 0; i < n; ++i) {
      const window_registration r{.window = 0,
                                  .base = reinterpret_cast<std::uintptr_t>(memory[i].data()),
                                  .bytes = memory[i].size()};
      submit(i, kRegisterWindow, i, std::as_bytes(std::span(&r, 1)), {});
    }
    wait([&] {
      for (std::uint64_t r : registered) {
        if (r == 0) return false;
      }
      return true;
    });
  }

  void submit(comm::node_id from, submission_kind kind, comm::node_id to, comm::byte_span head,
              comm::byte_span data) {
    const comm::byte_span pieces[2] = {head, data};
    while (!nics[from]->channel().host_submit(kind, to, pieces)) pump(from);
    nics[from]->wake();
  }
  void put(comm::node_id from, comm::node_id to, std::uint64_t offset, comm::byte_span data,
           std::uint32_t window = 0) {
    const window_access a{.window = window, .offset = offset, .bytes = data.size()};
    submit(from, kPut, to, std::as_bytes(std::span(&a, 1)), data);
  }
  void get(comm::node_id from, comm::node_id to, std::uint64_t offset, std::uint64_t bytes,
           std::uint32_t ticket) {
    const window_access a{.window = 0, .ticket = ticket, .offset = offset, .bytes = bytes};
    submit(from, kGet, to, std::as_bytes(std::span(&a, 1)), {});
  }
  void fence(comm::node_id from, std::uint64_t ticket) {
    const fence_ticket f{.ticket = ticket};
    submit(from, kFence, from, std::as_bytes(std::span(&f, 1)), {});
  }

  // Runs node i's NIC (inline) and takes its host's deliveries.
  void pump(comm::node_id i) {
    if (nics[i]->runs_inline()) {
      bool did = false;
      absl::Status s = nics[i]->poll(did);
      ASSERT_TRUE(s.ok()) << s;
    }
    nics[i]->channel().host_poll([&](const delivery& d) {
      std::vector<std::byte> bytes(d.payload.begin(), d.payload.end());
      if (d.kind == kGetResult) {
        gets[i].push_back(std::move(bytes));
      } else if (d.kind == kRemoteStoreRefused) {
        refusals[i].push_back(std::move(bytes));
      } else if (d.kind == kFenceDone) {
        fence_ticket f;
        std::memcpy(&f, d.payload.data(), sizeof(f));
        fences_done[i] = f.ticket;
      } else if (d.kind == kWindowRegistered) {
        ++registered[i];
      } else {
        ADD_FAILURE() << "unexpected delivery kind " << static_cast<int>(d.kind);
      }
    });
  }

  // Pumps the nodes in `hosts` (every node when empty) until `done()` (bounded).
  template <typename F>
  void wait(F&& done, const std::vector<comm::node_id>& hosts = {}) {
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (!done()) {
      if (hosts.empty()) {
        for (comm::node_id i = 0; i < nics.size(); ++i) pump(i);
      } else {
        for (comm::node_id i : hosts) pump(i);
      }
      ASSERT_LT(absl::Now(), deadline) << "the remote store did not answer";
    }
  }
};

std::vector<std::byte> pattern(std::size_t n, int seed) {
  std::vector<std::byte> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = std::byte((i * 37 + seed) & 0xff);
  return out;
}

// A large put (many transport packets) and small ones, a fence, then gets: the fence comes
// only once every put was applied, and the gets return the bytes, for a target that is
// another node and for this one.
void puts_fence_gets(bool own_thread) {
  store_cluster c(2, own_thread, 1 << 20);
  const std::vector<std::byte> big = pattern(300000, 1), small = pattern(5, 2);
  for (comm::node_id t = 0; t < 2; ++t) {
    c.put(0, t, 1000, big);
    c.put(0, t, 7, small);
  }
  c.fence(0, 1);
  c.wait([&] { return c.fences_done[0] == 1; });
  for (comm::node_id t = 0; t < 2; ++t) {
    ASSERT_TRUE(std::equal(big.begin(), big.end(), c.memory[t].begin() + 1000)) << t;
    ASSERT_TRUE(std::equal(small.begin(), small.end(), c.memory[t].begin() + 7)) << t;
    c.get(0, t, 1000, big.size(), /*ticket=*/t);
  }
  c.wait([&] { return c.gets[0].size() == 2; });
  for (const std::vector<std::byte>& g : c.gets[0]) {
    get_result head;
    std::memcpy(&head, g.data(), sizeof(head));
    ASSERT_EQ(head.bytes, big.size());
    EXPECT_TRUE(std::equal(big.begin(), big.end(), g.begin() + sizeof(head))) << head.ticket;
  }
  EXPECT_TRUE(c.refusals[0].empty());
}

TEST(RemoteStoreService, PutsFenceAndGetsInline) { puts_fence_gets(false); }
TEST(RemoteStoreService, PutsFenceAndGetsOnNicThreads) { puts_fence_gets(true); }

// With NIC threads, node 1's host never polls, and node 0's puts, fence and get complete.
TEST(RemoteStoreService, TheTargetsHostIsNotNeeded) {
  store_cluster c(2, /*own_thread=*/true, 4096);
  const std::vector<std::byte> b = pattern(4000, 3);
  c.put(0, 1, 96, b);
  c.fence(0, 5);
  c.get(0, 1, 96, b.size(), 9);
  c.wait([&] { return c.fences_done[0] == 5 && c.gets[0].size() == 1; }, {0});
  EXPECT_TRUE(std::equal(b.begin(), b.end(), c.gets[0][0].begin() + sizeof(get_result)));
  EXPECT_FALSE(c.nics[1]->channel().host_has_deliveries());
}

// A put outside the target's window or to a window it does not serve, and a get outside
// it: the target refuses (nothing written), the refusal names what and why, and a refused
// put still counts as answered for the fence.
TEST(RemoteStoreService, RefusalsNameWhatWasRefused) {
  store_cluster c(2, /*own_thread=*/false, 64);
  const std::vector<std::byte> b = pattern(16, 4);
  c.put(0, 1, 60, b);                    // 16 bytes at 60 of 64
  c.put(0, 1, 0, b, /*window=*/3);       // no window 3
  c.get(0, 1, ~std::uint64_t{0}, 2, 1);  // offset + size overflows
  c.fence(0, 1);
  c.wait([&] { return c.fences_done[0] == 1 && c.refusals[0].size() == 3; });
  std::vector<refusal> r(3);
  for (int i = 0; i < 3; ++i) std::memcpy(&r[i], c.refusals[0][i].data(), sizeof(refusal));
  EXPECT_EQ(r[0].reason, refusal_reason::out_of_bounds);
  EXPECT_EQ(r[0].window_bytes, 64u);
  EXPECT_EQ(r[0].access.offset, 60u);
  EXPECT_EQ(r[0].get, 0);
  EXPECT_EQ(r[1].reason, refusal_reason::no_such_window);
  EXPECT_EQ(r[1].access.window, 3u);
  EXPECT_EQ(r[2].reason, refusal_reason::out_of_bounds);
  EXPECT_EQ(r[2].get, 1);
  for (std::byte x : c.memory[1]) ASSERT_EQ(x, std::byte{0}) << "a refused put wrote";
  EXPECT_TRUE(c.gets[0].empty());
}

}  // namespace
}  // namespace iso::nicfw
