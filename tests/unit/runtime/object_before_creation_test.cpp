// What a node keeps for an object created through the order whose creation it has not
// applied (runtime/objects/before_creation.cpp) is bounded: a creation that never comes
// (its creator failed, or a node calls an id no node creates) does not keep calls or copies
// there for ever. A kept call is answered at the call deadline with an error naming the
// object; a kept copy is dropped with a warning; beyond object_table::kMaxParked kept at
// once, a call is refused at once and a copy fails the node, naming the object.
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

#include "base/log.hpp"
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

using order_and_nic = std::tuple<iso::order_kind, iso::nic_mode>;
class BeforeCreation : public testing::TestWithParam<order_and_nic> {
 protected:
  [[nodiscard]] iso::options opts() const {
    iso::options o = iso::test::object_job_options(std::get<0>(GetParam()));
    o.nic = std::get<1>(GetParam());
    o.object_call_timeout = std::chrono::milliseconds(300);
    return o;
  }
  [[nodiscard]] iso::order_kind order() const { return std::get<0>(GetParam()); }
};

INSTANTIATE_TEST_SUITE_P(OrdersAndNics, BeforeCreation,
                         testing::Combine(iso::test::both_object_orders(),
                                          testing::Values(iso::nic_mode::thread,
                                                          iso::nic_mode::inline_poll)),
                         [](const testing::TestParamInfo<order_and_nic>& p) {
                           return iso::test::order_name(std::get<0>(p.param)) + "_" +
                                  (std::get<1>(p.param) == iso::nic_mode::thread ? "thread"
                                                                                 : "inline");
                         });

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

// Node 0 calls kMaxParked + 1 single copies owned by node 1, which never applies their
// creations: node 1 keeps the first kMaxParked calls and answers each at the call deadline
// naming its object; the last is refused at once; node 1 then keeps nothing. (A deadline of
// a second: node 0's calls would end at their own deadline if node 1 had not acknowledged
// them by then.)
TEST_P(BeforeCreation, KeptCallsAreAnsweredAtTheDeadlineAndRefusedBeyondTheLimit) {
  constexpr std::size_t kCalls = object_table::kMaxParked + 1;
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

// Node 0 applies a creation on itself and a migration to node 1, and ships node 1 the copy;
// node 1 never applies either: it keeps the copy for the call deadline, then drops it with
// a warning.
TEST_P(BeforeCreation, AKeptCopyIsDroppedWithAWarningAtTheDeadline) {
  iso::test::allow_log_lines_in_this_test();  // the warning is the point
  const int warnings_before = iso::base::log_warning_count();
  const int status = run_inproc(2, opts(), [&](iso::node& node) {
    played_order played(node);
    if (node.id() == 0) {
      played.deliver(creation(object_placement::single_copy, 0, order()));
      played.deliver(iso::test::migration(kFirstOrdered, 1));
      (void)iso::object::attach(node, kFirstOrdered);  // ships the copy to node 1
      EXPECT_EQ(receive_value<int>(node), 1);
      return;
    }
    until(node, "the copy was never dropped",
          [&] { return iso::base::log_warning_count() > warnings_before; });
    EXPECT_EQ(kept_on(node), 0U);
    send_value(node, 0, 1);
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(iso::base::log_warning_count() - warnings_before, 1);
}

// Node 0 ships node 1 the copies of kMaxParked + 1 objects whose creations node 1 never
// applies: node 1 keeps kMaxParked and fails at the next, naming its object (a copy refused
// would be the object's state lost).
TEST_P(BeforeCreation, ACopyBeyondTheLimitFailsTheNodeNamingTheObject) {
  iso::test::allow_log_lines_in_this_test();  // the nodes log the failure
  constexpr std::size_t kCopies = object_table::kMaxParked + 1;
  iso::options o = opts();
  o.object_call_timeout = std::chrono::seconds(60);  // none is dropped before the last comes
  std::string failure = "node 1 did not fail";
  const int status = run_inproc(2, o, [&](iso::node& node) {
    played_order played(node);
    if (node.id() == 0) {
      for (std::size_t i = 0; i < kCopies; ++i) {
        played.deliver(creation(object_placement::single_copy, 0, order()));
        played.deliver(iso::test::migration(kFirstOrdered + i, 1));
      }
      (void)iso::object::attach(node, kFirstOrdered + kCopies - 1);  // ships every copy
      (void)receive_value<int>(node);                                // ends when node 1 fails
      return;
    }
    try {
      (void)receive_value<int>(node);
    } catch (const iso::error& e) {
      failure = e.what();
    }
  });
  EXPECT_NE(status, 0);
  const std::string expected = "object " + std::to_string(kFirstOrdered + kCopies - 1) +
                               ": a copy of it reached node 1 before its creation there";
  EXPECT_NE(failure.find(expected), std::string::npos) << failure;
}

}  // namespace
