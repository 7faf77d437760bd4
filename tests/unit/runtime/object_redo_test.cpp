// A dropped call (iso::object_call destroyed before its result) sent to the single copy of
// an automatic object that became replicated before its owner ran it is answered "moved:
// replicated". A dropped write then goes out again, through the order; a dropped read is
// forgotten (nobody wants its result and it changes nothing). The node settles its dropped
// calls before it leaves the job, and that wait is bounded by the call deadline.
//
// The cases play the objects order (tests/support/played_order.hpp): node 0, the owner,
// applies the creation and the switch to replicas; node 1 has applied only the creation
// when it calls, so its call goes to node 0 as a request, which node 0 answers "moved".
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>

#include "absl/status/status.h"
#include "iso/iso.hpp"
#include "iso/object.hpp"
#include "runtime/node_state.hpp"
#include "tests/support/inproc_job.hpp"
#include "tests/support/object_test_params.hpp"
#include "tests/support/object_types.hpp"
#include "tests/support/played_order.hpp"
#include "tests/support/value_messages.hpp"

namespace {

using iso::object_placement;
using iso::test::creation;
using iso::test::kFirstOrdered;
using iso::test::played_order;
using iso::test::receive_value;
using iso::test::replication;
using iso::test::run_inproc;
using iso::test::send_value;
namespace int_ops = iso::test::int_ops;

constexpr iso::node_id kOwner = 0;
constexpr iso::node_id kDropper = 1;

class DroppedCallRedo : public iso::test::order_nic_test {};

INSTANTIATE_TEST_SUITE_P(OrdersAndNics, DroppedCallRedo, iso::test::both_orders_and_nics(),
                         iso::test::order_nic_name);

// What node 1 does before it leaves the job (run.cpp's leave_job): settle its dropped calls.
absl::Status settle_as_when_leaving(iso::node& node) {
  return iso::detail::node_state::of(node).settle_dropped_objects(/*leaving=*/true);
}

// The owner applies the creation and the switch to replicas (it ships node 1 its replica,
// which node 1 keeps for the switch it has not applied), tells node 1 to call, and serves
// until node 1 is done. After 30 s (it takes a second at most) it fails, ending the job, so
// that a node 1 that hangs fails the case within the test's timeout, and says so.
void owner_switches_and_serves(iso::node& node, played_order& played, iso::order_kind order,
                               const std::string& type_name) {
  played.deliver(creation(object_placement::automatic, kOwner, order, type_name));
  played.deliver(replication(kFirstOrdered));
  iso::object x = iso::object::attach(node, kFirstOrdered);
  ASSERT_EQ(x.current_placement(), object_placement::replicated);
  send_value(node, kDropper, 1);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  std::optional<iso::message> done;
  while (!(done = node.try_receive())) {
    if (std::chrono::steady_clock::now() > give_up) {
      throw std::runtime_error("node 1 never ended its part (it hangs)");
    }
  }
  EXPECT_EQ(done->bytes().size(), sizeof(int));
}

// Node 1 never applies the switch (its order delivers nothing more), so the dropped write
// cannot go out again: settling it before leaving ends at the call deadline with an error
// naming the object and operation, where it waited for ever (the node hung before its end
// barrier).
TEST_P(DroppedCallRedo, AWriteThatCannotGoOutAgainEndsAtTheCallDeadlineNamingTheObject) {
  iso::options o = opts();
  o.object_call_timeout = std::chrono::milliseconds(300);
  absl::Status settled = absl::UnknownError("not settled");
  const int status = run_inproc(2, o, [&](iso::node& node) {
    played_order played(node);
    if (node.id() == kOwner) {
      owner_switches_and_serves(node, played, order(), "Int");
      return;
    }
    played.deliver(creation(object_placement::automatic, kOwner, order()));
    iso::object x = iso::object::attach(node, kFirstOrdered);
    EXPECT_EQ(receive_value<int>(node), 1);
    ASSERT_EQ(x.current_placement(), object_placement::single_copy);  // as node 1 knows it
    (void)x.start<std::int64_t>(int_ops::kInc, std::int64_t{1});      // to node 0, dropped at once
    settled = settle_as_when_leaving(node);
    send_value(node, kOwner, 2);
  });
  // Reported once: leaving after it does not wait for the lost call again.
  EXPECT_EQ(status, 0);
  EXPECT_EQ(settled.code(), absl::StatusCode::kDeadlineExceeded) << settled;
  const std::string what(settled.message());
  EXPECT_NE(what.find("object " + std::to_string(kFirstOrdered) + " (Int), operation 0 (inc)"),
            std::string::npos)
      << what;
  EXPECT_NE(what.find("to be sent again"), std::string::npos) << what;
}

// Reads of the Counted type's peek() that ran, on every node: only a read that runs twice
// can make it more than the calls that asked for one.
std::atomic<int> g_peeks_run{0};

namespace counted_ops {
constexpr iso::operation_id kPeek = 0;
}

// An Int whose one read counts the times it runs.
iso::object_type make_counted_type() {
  return iso::typed_object<std::int64_t>("Counted")
      .read(counted_ops::kPeek, "peek",
            [](const std::int64_t& v) {
              g_peeks_run.fetch_add(1);
              return v;
            })
      .type();
}

// Node 1 drops a read that node 0 answers "moved: replicated"; then it applies the switch,
// so that the read could run on its replica. Settling forgets it: it runs nowhere (it ran
// on node 1's replica before). A read node 1 then makes itself runs once.
TEST_P(DroppedCallRedo, ADroppedReadAnsweredMovedIsForgottenNotRunAgain) {
  g_peeks_run.store(0);
  int peeks_after_settling = -1;
  absl::Status settled = absl::UnknownError("not settled");
  const iso::object_type counted = make_counted_type();
  const int status = run_inproc(2, opts(), [&](iso::node& node) {
    played_order played(node, counted);
    if (node.id() == kOwner) {
      owner_switches_and_serves(node, played, order(), "Counted");
      return;
    }
    played.deliver(creation(object_placement::automatic, kOwner, order(), "Counted"));
    iso::object x = iso::object::attach(node, kFirstOrdered);
    EXPECT_EQ(receive_value<int>(node), 1);
    ASSERT_EQ(x.current_placement(), object_placement::single_copy);
    (void)x.start<std::int64_t>(counted_ops::kPeek);  // to node 0, dropped at once
    played.deliver(replication(kFirstOrdered));       // its replica (kept since) is installed
    settled = settle_as_when_leaving(node);           // waits for node 0's "moved"
    peeks_after_settling = g_peeks_run.load();
    EXPECT_EQ(x.current_placement(), object_placement::replicated);
    EXPECT_EQ(x.read<std::int64_t>(counted_ops::kPeek), 0);
    send_value(node, kOwner, 2);
  });
  EXPECT_EQ(status, 0);
  EXPECT_TRUE(settled.ok()) << settled;
  EXPECT_EQ(peeks_after_settling, 0);
  EXPECT_EQ(g_peeks_run.load(), 1);  // node 1's own read
}

}  // namespace
