// The host's side of the NIC's fetch-and-add counters, through real nodes: the event loop
// routes the answers to the client by their delivery kind, with the SMM and plain messages
// registered beside it.
#include "runtime/counters/fetch_add_client.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "iso/iso.hpp"
#include "runtime/node_state.hpp"
#include "tests/support/inproc_job.hpp"

namespace {

using iso::test::run_inproc;

class FetchAddClient : public iso::test::nic_mode_test {};
INSTANTIATE_TEST_SUITE_P(NicModes, FetchAddClient, iso::test::both_nic_modes(),
                         iso::test::nic_mode_name);

// Every node takes numbers from one counter on node 1 (a work queue's idiom), with
// isochrons and plain messages flowing at the same time: every number is taken once.
TEST_P(FetchAddClient, EveryNumberIsTakenOnce) {
  constexpr int kNodes = 3;
  constexpr int kEach = 300;
  std::mutex mu;
  std::vector<std::uint64_t> taken;
  const int status = run_inproc(kNodes, opts(), [&](iso::node& node) {
    iso::detail::node_state& state = iso::detail::node_state::of(node);
    iso::runtime::fetch_add_client& counters = state.counters();
    auto x = node.allocate<std::int64_t>(1)[0];
    std::vector<std::uint64_t> mine;
    for (int k = 0; k < kEach; ++k) {
      absl::StatusOr<std::uint32_t> t = counters.fetch_add(1, /*counter=*/5, 1);
      ASSERT_TRUE(t.ok()) << t.status();
      {
        iso::isochron iso(node);
        iso.write(x, k);
      }
      if (k % 50 == 0) node.send((node.id() + 1) % kNodes, std::as_bytes(std::span(&k, 1)));
      ASSERT_TRUE(state.loop().wait_for([&] { return counters.ready(*t); }).ok());
      mine.push_back(counters.take(*t));
      if (k % 50 == 0) (void)node.receive();
    }
    EXPECT_EQ(counters.outstanding(), 0u);
    EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end()));
    std::lock_guard lock(mu);
    taken.insert(taken.end(), mine.begin(), mine.end());
  });
  EXPECT_EQ(status, 0);
  std::sort(taken.begin(), taken.end());
  ASSERT_EQ(taken.size(), std::size_t{kNodes * kEach});
  for (std::size_t i = 0; i < taken.size(); ++i) ASSERT_EQ(taken[i], i);
}

TEST_P(FetchAddClient, ACounterOfANodeOutsideTheJobIsRefused) {
  const int status = run_inproc(2, opts(), [&](iso::node& node) {
    absl::StatusOr<std::uint32_t> t =
        iso::detail::node_state::of(node).counters().fetch_add(2, 0, 1);
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(t.status().message().find("node 2"), std::string_view::npos) << t.status();
  });
  EXPECT_EQ(status, 0);
}

}  // namespace
