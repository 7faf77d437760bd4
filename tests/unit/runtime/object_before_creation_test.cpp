// What a node keeps for an object created through the order whose creation it has not
// applied (runtime/objects/before_creation.cpp) is bounded: a creation that never comes
// (a node calls an id no node creates) does not keep calls there for ever: a kept call is
// answered at the call deadline with an error naming the object, and beyond
// object_table::kMaxParkedCalls kept for one caller, its next call is refused at once. A
// kept copy waits for its creation however late it comes.
//
// The cases play the objects order (tests/support/played_order.hpp): only node 0 gets the
// creations; node 1, which owns or receives the objects, never applies them.
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "iso/iso.hpp"
#include "iso/object.hpp"
#include "runtime/node_state.hpp"
#include "runtime/objects/object_table.hpp"
#include "tests/support/inproc_job.hpp"
#include "tests/support/object_test_params.hpp"
#include "tests/support/object_types.hpp"
#include "tests/support/played_order.hpp"
#include "tests/support/test_support.hpp"
#include "tests/support/value_messages.hpp"

namespace {

using iso::object_placement;
using iso::runtime::object_table;
using iso::test::creation;
using iso::test::kFirstOrdered;
using iso::test::played_order;
using iso::test::receive_value;
using iso::test::run_inproc;
using iso::test::send_value;
namespace int_ops = iso::test::int_ops;

class BeforeCreation : public iso::test::order_nic_test {
 protected:
  [[nodiscard]] iso::options opts() const {
    iso::options o = order_nic_test::opts();
    o.object_call_timeout = std::chrono::milliseconds(300);
    return o;
  }
};

INSTANTIATE_TEST_SUITE_P(OrdersAndNics, BeforeCreation, iso::test::both_orders_and_nics(),
                         iso::test::order_nic_name);

std::size_t kept_on(iso::node& node) {
  return iso::detail::node_state::of(node).objects().parked_before_creation();
}

// Rounds until `done` holds; after 30 s (it takes a second at most) the node fails, ending
// the job, so that a case that would wait for ever fails within the test's timeout.
template <typename Done>
void until(iso::node& node, const char* what, Done done) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!done()) {
    if (std::chrono::steady_clock::now() > give_up) {
      throw std::runtime_error(std::string("node ") + std::to_string(node.id()) + ": " + what);
    }
    (void)node.try_receive();  // makes progress; no message comes meanwhile
  }
}

// Node 0 calls kMaxParkedCalls + 1 single copies owned by node 1, which never applies their
// creations: node 1 keeps the first kMaxParkedCalls calls and answers each at the call deadline
// naming its object; the last is refused at once; node 1 then keeps nothing. (A deadline of
// a second: node 0's calls would end at their own deadline if node 1 had not acknowledged
// them by then.)
TEST_P(BeforeCreation, KeptCallsAreAnsweredAtTheDeadlineAndRefusedBeyondTheLimit) {
  constexpr std::size_t kCalls = object_table::kMaxParkedCalls + 1;
  iso::options o = opts();
  o.object_call_timeout = std::chrono::seconds(1);
  std::vector<iso::error_code> codes(kCalls, iso::error_code::unknown);
  std::vector<std::string> failures(kCalls);
  std::size_t kept_after = 1;
  const int status = run_inproc(2, o, [&](iso::node& node) {
    played_order played(node);
    if (node.id() == 1) {
      EXPECT_EQ(receive_value<int>(node), 1);  // keeps and answers the calls meanwhile
      kept_after = kept_on(node);
      return;
    }
    for (std::size_t i = 0; i < kCalls; ++i) {
      played.deliver(creation(object_placement::single_copy, 1, order()));
    }
    std::vector<iso::object> objects;
    std::vector<iso::pending<std::int64_t>> calls;
    for (std::size_t i = 0; i < kCalls; ++i) {
      objects.push_back(iso::object::attach(node, kFirstOrdered + i));
      calls.push_back(objects.back().start<std::int64_t>(int_ops::kInc, std::int64_t{1}));
    }
    for (std::size_t i = 0; i < kCalls; ++i) {
      try {
        (void)calls[i].get();
      } catch (const iso::error& e) {
        codes[i] = e.code();
        failures[i] = e.what();
      }
    }
    send_value(node, 1, 1);
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(kept_after, 0U);
  for (std::size_t i = 0; i < kCalls; ++i) {
    const bool refused = i == kCalls - 1;  // requests from one node arrive in order
    EXPECT_EQ(codes[i],
              refused ? iso::error_code::resource_exhausted : iso::error_code::deadline_exceeded)
        << "call " << i << ": " << failures[i];
    const std::string object = "object " + std::to_string(kFirstOrdered + i) + ", operation 0";
    EXPECT_NE(failures[i].find(object), std::string::npos) << failures[i];
    EXPECT_NE(failures[i].find(refused ? "the call is refused"
                                       : "did not apply the object's creation within 1s"),
              std::string::npos)
        << failures[i];
    if (testing::Test::HasFailure()) break;  // one call's story is enough
  }
}

// Node 0 creates an object on itself, adds 41, and applies a migration to node 1, which
// ships node 1 the copy; node 1 applies neither the creation nor the move until well past the
// call deadline. A copy is kept however late its creation comes (the creation reaches every
// node unless the job fails, and the copy is the object's state): node 1 then owns the
// object with the value 41. It was dropped at the deadline before, and node 1 became an
// owner without a state, whose calls were never answered.
TEST_P(BeforeCreation, AKeptCopyWaitsForItsCreationPastTheCallDeadline) {
  std::int64_t value_at_node_1 = -1;
  std::size_t kept_past_deadline = 0;
  const int status = run_inproc(2, opts(), [&](iso::node& node) {
    played_order played(node);
    if (node.id() == 0) {
      played.deliver(creation(object_placement::single_copy, 0, order()));
      iso::object x = iso::object::attach(node, kFirstOrdered);
      EXPECT_EQ(x.call<std::int64_t>(int_ops::kInc, std::int64_t{41}), 41);
      played.deliver(iso::test::migration(kFirstOrdered, 1));
      (void)iso::object::attach(node, kFirstOrdered);  // applies the move: ships the copy
      EXPECT_EQ(receive_value<int>(node), 1);
      return;
    }
    until(node, "the copy never came", [&] { return kept_on(node) == 1; });
    const auto past_deadline =
        std::chrono::steady_clock::now() + 3 * std::chrono::milliseconds(300);
    until(node, "the clock stopped",
          [&] { return std::chrono::steady_clock::now() > past_deadline; });
    kept_past_deadline = kept_on(node);
    if (kept_past_deadline != 1) {  // dropped: the object would have no state here
      send_value(node, 0, 1);
      return;
    }
    played.deliver(creation(object_placement::single_copy, 0, order()));
    played.deliver(iso::test::migration(kFirstOrdered, 1));
    iso::object x = iso::object::attach(node, kFirstOrdered);
    until(node, "the move was never applied", [&] { return x.owner() == 1; });
    value_at_node_1 = x.call<std::int64_t>(int_ops::kValue);
    EXPECT_EQ(kept_on(node), 0U);
    send_value(node, 0, 1);
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(kept_past_deadline, 1U);
  EXPECT_EQ(value_at_node_1, 41);
}

}  // namespace
