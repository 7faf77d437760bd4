// Dropped calls that must be dispatched again (iso/object.hpp, object_call): a write whose
// handle was dropped, sent to the single copy of an automatic object that became replicated
// before the owner ran it, is answered "moved: replicated" and has to go out again through
// the objects order. The node that dropped it settles it before it leaves the job, and at
// its next poll, not only at its next object call; the write is applied exactly once on
// every replica.
//
// The switch is forced, not left to chance: node 0 owns the single copy and reads it alone
// until automatic placement replicates it (a window of reads and no writes); node 1 waits
// without making progress meanwhile, so it still sees the single copy when it sends its
// write, which node 0 then answers "moved". Too few calls follow for the object to switch
// back. Node 2 only observes.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "iso/iso.hpp"
#include "iso/object.hpp"
#include "tests/support/inproc_job.hpp"
#include "tests/support/object_test_params.hpp"
#include "tests/support/object_types.hpp"

namespace {

using iso::object_placement;
using iso::test::run_inproc;
namespace int_ops = iso::test::int_ops;

using settle_params = std::tuple<iso::nic_mode, iso::order_kind>;

constexpr int kNodes = 3;
constexpr iso::node_id kOwner = 0;
constexpr iso::node_id kDropper = 1;

class DroppedCallSettles : public testing::TestWithParam<settle_params> {
 protected:
  [[nodiscard]] static iso::options job_options() {
    iso::options o = iso::test::object_job_options(std::get<1>(GetParam()));
    o.nic = std::get<0>(GetParam());
    return o;
  }
};

std::string param_name(const testing::TestParamInfo<settle_params>& p) {
  return std::string(std::get<0>(p.param) == iso::nic_mode::thread ? "thread" : "inline") + "_" +
         iso::test::order_name(std::get<1>(p.param));
}

// Node 1 must not make progress while node 0 switches the object, so node 0's switch has to
// complete without node 1: with an inline NIC, the isotach order needs every node's NIC.
INSTANTIATE_TEST_SUITE_P(
    NicModesAndOrders, DroppedCallSettles,
    testing::Values(settle_params{iso::nic_mode::thread, iso::order_kind::sequencer},
                    settle_params{iso::nic_mode::thread, iso::order_kind::isotach},
                    settle_params{iso::nic_mode::inline_poll, iso::order_kind::sequencer}),
    param_name);

// What the job shares between its nodes' threads (the test's own coordination: no node
// waits on these while the runtime has to make progress for another node).
struct handshake {
  std::atomic<bool> replicated_at_owner{false};
  std::atomic<int> observed{0};
};

// The owner reads its single copy alone until automatic placement replicates it; node 1
// waits (computing, no progress) and then drops an increment sent to the owner it knows.
void switch_under_a_dropped_write(iso::node& node, iso::object& counter, handshake& shared) {
  if (node.id() == kOwner) {
    while (counter.current_placement() != object_placement::replicated) {
      (void)counter.read<std::int64_t>(int_ops::kValue);
    }
    shared.replicated_at_owner.store(true);
  } else if (node.id() == kDropper) {
    while (!shared.replicated_at_owner.load()) {
      // No call into the runtime: this node must not apply the switch before it sends.
    }
    ASSERT_EQ(counter.current_placement(), object_placement::single_copy);
    (void)counter.start<std::int64_t>(int_ops::kInc, std::int64_t{1});  // dropped at once
  } else {
    while (!shared.replicated_at_owner.load()) node.poll();
  }
}

// The dropping node leaves right after dropping its write: the others still see it once.
TEST_P(DroppedCallSettles, BeforeItsNodeLeavesTheJob) {
  const iso::object_type int_type = iso::test::make_int_type();
  handshake shared;
  std::vector<std::int64_t> seen(kNodes, -1);
  const int status = run_inproc(kNodes, job_options(), [&](iso::node& node) {
    iso::object counter(node, int_type,
                        {.placement = object_placement::automatic, .owner = kOwner});
    switch_under_a_dropped_write(node, counter, shared);
    if (node.id() == kDropper) return;  // leaves with the write answered "moved"
    // Without the settling the write never comes: node 1 then waits in the end barrier
    // until it times out, which fails the job.
    (void)counter.read<std::int64_t>(int_ops::kAwait, std::int64_t{1});
    EXPECT_EQ(counter.current_placement(), object_placement::replicated);
    seen[node.id()] = counter.read<std::int64_t>(int_ops::kValue);
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(seen[kOwner], 1);
  EXPECT_EQ(seen[2], 1);
}

// The dropping node stays and only polls: its poll dispatches the write again. Then it
// writes once more itself; that write is ordered after anything it sent before, so every
// replica ending at 101 shows the dropped write was applied exactly once.
TEST_P(DroppedCallSettles, AtItsNodesNextPoll) {
  const iso::object_type int_type = iso::test::make_int_type();
  handshake shared;
  std::vector<std::int64_t> seen(kNodes, -1);
  std::vector<std::int64_t> last(kNodes, -1);
  const int status = run_inproc(kNodes, job_options(), [&](iso::node& node) {
    iso::object counter(node, int_type,
                        {.placement = object_placement::automatic, .owner = kOwner});
    switch_under_a_dropped_write(node, counter, shared);
    if (node.id() == kDropper) {
      // Only polls (no object call) until the others have seen the dropped write.
      while (shared.observed.load() < kNodes - 1) node.poll();
      ASSERT_EQ(counter.current_placement(), object_placement::replicated);
      seen[node.id()] = counter.read<std::int64_t>(int_ops::kAwait, std::int64_t{1});
      (void)counter.call<std::int64_t>(int_ops::kInc, std::int64_t{100});
      last[node.id()] = counter.read<std::int64_t>(int_ops::kValue);
      return;
    }
    seen[node.id()] = counter.read<std::int64_t>(int_ops::kAwait, std::int64_t{1});
    shared.observed.fetch_add(1);
    (void)counter.read<std::int64_t>(int_ops::kAwait, std::int64_t{101});
    last[node.id()] = counter.read<std::int64_t>(int_ops::kValue);
  });
  EXPECT_EQ(status, 0);
  for (int n = 0; n < kNodes; ++n) {
    EXPECT_EQ(seen[n], 1) << "node " << n;
    EXPECT_EQ(last[n], 101) << "node " << n;
  }
}

}  // namespace
