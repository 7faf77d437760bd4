// Fetch-and-add counters held by the NIC (nicfw/fetch_add_service.hpp), on engines over
// the inproc transport with fake hosts: what the service promises its hosts.
#include "nicfw/fetch_add_service.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "comm/inproc.hpp"
#include "nicfw/engine.hpp"

namespace iso::nicfw {
namespace {

struct counters_cluster {
  std::vector<std::unique_ptr<engine>> nics;
  // Answers by node, in the order each host got them: (ticket, value before).
  std::vector<std::vector<fetch_add_result>> answers;

  counters_cluster(std::uint32_t n, bool own_thread) {
    auto topo = std::make_shared<topology>(topology::single_switch(n));
    auto transports = comm::make_inproc_fabric(n, {.ring_capacity = 1 << 16});
    EXPECT_TRUE(transports.ok());
    answers.resize(n);
    for (comm::node_id i = 0; i < n; ++i) {
      nics.push_back(std::make_unique<engine>(i, topo, std::move((*transports)[i]),
                                              engine_options{.own_thread = own_thread,
                                                             .local_nodes = n,
                                                             .local_index = i,
                                                             .host_queue_bytes = 1 << 20}));
      nics.back()->add_service(std::make_unique<fetch_add_service>(nics.back()->context()),
                               fetch_add_service::kBinding);
    }
    for (auto& nic : nics) nic->start();
  }

  void request(comm::node_id from, comm::node_id owner, std::uint64_t counter, std::uint64_t delta,
               std::uint32_t ticket, std::uint32_t tag = 0) {
    const fetch_add_request r{.counter = counter, .delta = delta, .ticket = ticket, .tag = tag};
    const comm::byte_span piece = std::as_bytes(std::span(&r, 1));
    while (!nics[from]->channel().host_submit(kFetchAddSubmission, owner, std::span(&piece, 1))) {
      pump(from);
    }
    nics[from]->wake();
  }

  // Runs node i's NIC (inline) and takes its host's deliveries.
  void pump(comm::node_id i) {
    if (nics[i]->runs_inline()) {
      bool did = false;
      absl::Status s = nics[i]->poll(did);
      ASSERT_TRUE(s.ok()) << s;
    }
    nics[i]->channel().host_poll([&](const delivery& d) {
      ASSERT_EQ(d.kind, kFetchAddResult);
      ASSERT_EQ(d.payload.size(), sizeof(fetch_add_result));
      fetch_add_result r;
      std::memcpy(&r, d.payload.data(), sizeof(r));
      answers[i].push_back(r);
    });
  }

  // Pumps every node until each host in `hosts` has `expected` answers (bounded). Other
  // hosts take their deliveries too (inline, a NIC runs only when its host polls).
  void wait_for_answers(const std::vector<comm::node_id>& hosts, std::size_t expected) {
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    for (;;) {
      for (comm::node_id i = 0; i < nics.size(); ++i) pump(i);
      bool done = true;
      for (comm::node_id i : hosts) done &= answers[i].size() >= expected;
      if (done) return;
      if (absl::Now() >= deadline) {
        std::string state;
        for (comm::node_id i = 0; i < nics.size(); ++i) {
          state += " node " + std::to_string(i) + ": " + std::to_string(answers[i].size()) +
                   " answers, sent";
          for (comm::node_id p = 0; p < nics.size(); ++p) {
            const peer_counts pc = nics[i]->counts(p);
            state += " " + std::to_string(pc.packets_sent[16]) + "/" +
                     std::to_string(pc.packets_sent[17]) + " recv " +
                     std::to_string(pc.packets_received[16]) + "/" +
                     std::to_string(pc.packets_received[17]) + " backlog " +
                     std::to_string(pc.backlog) + ";";
          }
        }
        FAIL() << "fetch-and-add answers did not come:" << state;
      }
    }
  }
};

// Every node, the owner included, adds 1 to one counter many times: the values returned
// are exactly 0..total-1 (each once), each node's in increasing order (its requests are
// applied in the order it made them), and a last add sees the total.
void every_node_increments_one_counter(bool own_thread) {
  constexpr std::uint32_t kNodes = 3;
  constexpr std::uint32_t kEach = 500;
  counters_cluster c(kNodes, own_thread);
  for (std::uint32_t k = 0; k < kEach; ++k) {
    for (comm::node_id i = 0; i < kNodes; ++i) c.request(i, /*owner=*/1, /*counter=*/42, 1, k);
  }
  c.wait_for_answers({0, 1, 2}, kEach);
  std::vector<std::uint64_t> all;
  for (comm::node_id i = 0; i < kNodes; ++i) {
    ASSERT_EQ(c.answers[i].size(), kEach);
    for (std::uint32_t k = 0; k < kEach; ++k) {
      EXPECT_EQ(c.answers[i][k].ticket, k) << "node " << i;
      EXPECT_EQ(c.answers[i][k].counter, 42u);
      if (k > 0) {
        EXPECT_GT(c.answers[i][k].before, c.answers[i][k - 1].before) << "node " << i;
      }
      all.push_back(c.answers[i][k].before);
    }
  }
  std::sort(all.begin(), all.end());
  for (std::size_t v = 0; v < all.size(); ++v) ASSERT_EQ(all[v], v);
  c.request(2, 1, 42, 0, 9999);
  c.wait_for_answers({2}, kEach + 1);
  EXPECT_EQ(c.answers[2].back().before, kNodes * kEach);
}

TEST(FetchAddService, EveryNodeIncrementsOneCounterInline) {
  every_node_increments_one_counter(/*own_thread=*/false);
}

TEST(FetchAddService, EveryNodeIncrementsOneCounterOnNicThreads) {
  every_node_increments_one_counter(/*own_thread=*/true);
}

// Counters are independent, start at 0, and wrap as unsigned 64-bit integers.
TEST(FetchAddService, CountersAreIndependentAndWrap) {
  counters_cluster c(2, /*own_thread=*/false);
  c.request(0, 1, 1, 5, 0);
  c.request(0, 1, 2, ~std::uint64_t{0}, 1);  // 0 - 1
  c.request(0, 1, 1, 7, 2);
  c.request(0, 1, 2, 3, 3);
  c.request(0, 0, 1, 11, 4);  // node 0's own counter 1, not node 1's
  c.request(0, 0, 1, 0, 5);
  c.wait_for_answers({0}, 6);
  std::vector<std::uint64_t> before(6);
  for (const fetch_add_result& r : c.answers[0]) before[r.ticket] = r.before;
  EXPECT_EQ(before[0], 0u);
  EXPECT_EQ(before[1], 0u);
  EXPECT_EQ(before[2], 5u);
  EXPECT_EQ(before[3], ~std::uint64_t{0});
  EXPECT_EQ(before[4], 0u);
  EXPECT_EQ(before[5], 11u);
  EXPECT_TRUE(c.answers[1].empty()) << "the counter's host was told of a request";
}

// The counter's NIC answers without its host: with NIC threads, node 0's host never
// polls, and the others still get every answer.
TEST(FetchAddService, TheOwnersHostIsNotNeeded) {
  counters_cluster c(3, /*own_thread=*/true);
  for (std::uint32_t k = 0; k < 100; ++k) {
    c.request(1, 0, 7, 1, k);
    c.request(2, 0, 7, 1, k);
  }
  c.wait_for_answers({1, 2}, 100);
  EXPECT_EQ(c.answers[1].size() + c.answers[2].size(), 200u);
  EXPECT_FALSE(c.nics[0]->channel().host_has_deliveries());
}

// The request's tag (where the host wants the answer) comes back with it, from a remote
// counter and from the node's own.
TEST(FetchAddService, TheTagComesBackWithTheAnswer) {
  counters_cluster c(2, /*own_thread=*/false);
  c.request(0, 1, 3, 1, /*ticket=*/0, /*tag=*/0);
  c.request(0, 1, 3, 1, /*ticket=*/1, /*tag=*/77);
  c.request(0, 0, 3, 1, /*ticket=*/2, /*tag=*/0xfffffffe);
  c.wait_for_answers({0}, 3);
  std::vector<std::uint32_t> tags(3);
  for (const fetch_add_result& r : c.answers[0]) tags[r.ticket] = r.tag;
  EXPECT_EQ(tags[0], 0u);
  EXPECT_EQ(tags[1], 77u);
  EXPECT_EQ(tags[2], 0xfffffffeu);
}

}  // namespace
}  // namespace iso::nicfw
