// Reading an object's state in place (iso::object::inspect): it sees this node's own writes
// at once, without a copy of the state; every replica shows the same state once every write
// is applied there; a single copy is inspected where it is and refused elsewhere (naming
// the object and the node that keeps it); a wrong State type is refused naming both types;
// and calls into the runtime from the inspecting function (object calls, a barrier, a
// yield to a fiber that writes, a poll) are refused while the state stays as it was.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "iso/iso.hpp"
#include "tests/support/inproc_job.hpp"
#include "tests/support/object_test_params.hpp"
#include "tests/support/object_types.hpp"
#include "tests/support/test_support.hpp"

namespace {

using iso::error_code;
using iso::object_placement;
using iso::test::expect_error;
using iso::test::run_inproc;
namespace int_ops = iso::test::int_ops;

constexpr iso::operation_id kAppend = 0, kSize = 1;

// Copies of a log_state ever made (the runtime copies a state only to undo a body that may
// throw, and these bodies are noexcept): an inspection must make none.
std::atomic<std::uint64_t> copies{0};

struct log_state {
  log_state() = default;
  log_state(const log_state& other) : entries(other.entries) { ++copies; }
  log_state& operator=(const log_state&) = delete;
  std::vector<std::int64_t> entries;
};

iso::object_type make_log_type() {
  return iso::typed_object<log_state>("Log")
      .write(kAppend, "append",
             [](log_state& s, std::int64_t x) noexcept {
               s.entries.push_back(x);
               return static_cast<std::uint64_t>(s.entries.size());
             })
      .read(kSize, "size",
            [](const log_state& s) { return static_cast<std::uint64_t>(s.entries.size()); })
      .type();
}

// An entry of node n: distinct for every node and call.
std::int64_t entry_of(iso::node_id n, int i) { return std::int64_t{n} * 1000 + i; }

class ObjectInspect : public iso::test::order_nic_test {};

INSTANTIATE_TEST_SUITE_P(OrdersAndNics, ObjectInspect, iso::test::both_orders_and_nics(),
                         iso::test::order_nic_name);

TEST_P(ObjectInspect, SeesThisNodesOwnWritesAtOnceWithoutACopy) {
  const iso::object_type type = make_log_type();
  const int status = run_inproc(2, opts(), [&](iso::node& node) {
    iso::object log(node, type, {.placement = object_placement::replicated});
    std::vector<std::int64_t> mine;
    const log_state* first_seen = nullptr;
    for (int i = 0; i < 30; ++i) {
      const std::int64_t x = entry_of(node.id(), i);
      log.call<std::uint64_t>(kAppend, x);
      mine.push_back(x);
      const std::uint64_t copies_before = copies.load();
      // The write returned once this replica applied it: the inspection sees it, and this
      // node's entries in the order it made them.
      const std::vector<std::int64_t> seen = log.inspect<log_state>([&](const log_state& s) {
        if (first_seen == nullptr) first_seen = &s;
        EXPECT_EQ(&s, first_seen) << "the state is read where it lives, not from a copy";
        std::vector<std::int64_t> own;
        for (std::int64_t e : s.entries) {
          if (e / 1000 == node.id()) own.push_back(e);
        }
        return own;
      });
      EXPECT_EQ(seen, mine);
      EXPECT_EQ(copies.load(), copies_before);
    }
    // The same answer as the read operation, at the same point.
    const auto size = log.read<std::uint64_t>(kSize);
    EXPECT_GE(size, mine.size());
    EXPECT_GE(log.inspect<log_state>([](const log_state& s) { return s.entries.size(); }), size);
  });
  EXPECT_EQ(status, 0);
}

TEST_P(ObjectInspect, EveryReplicaShowsTheSameStateOnceEveryWriteIsApplied) {
  constexpr int kNodes = 2;
  constexpr int kEach = 40;
  const iso::object_type log_type = make_log_type();
  const iso::object_type int_type = iso::test::make_int_type();
  std::mutex mu;
  std::map<iso::node_id, std::vector<std::int64_t>> states;
  const int status = run_inproc(kNodes, opts(), [&](iso::node& node) {
    iso::object log(node, log_type, {.placement = object_placement::replicated});
    iso::object done(node, int_type, {.placement = object_placement::replicated});
    for (int i = 0; i < kEach; ++i) log.call<std::uint64_t>(kAppend, entry_of(node.id(), i));
    // One order, FIFO per sender: once every node's inc is applied here, so are all of its
    // appends, whatever the other replicas have applied yet.
    done.call<std::int64_t>(int_ops::kInc, std::int64_t{1});
    done.read<std::int64_t>(int_ops::kAwait, std::int64_t{kNodes});
    node.barrier();
    std::vector<std::int64_t> entries =
        log.inspect<log_state>([](const log_state& s) { return s.entries; });
    std::lock_guard lock(mu);
    states[node.id()] = std::move(entries);
  });
  EXPECT_EQ(status, 0);
  ASSERT_EQ(states.size(), 2u);
  EXPECT_EQ(states[0].size(), static_cast<std::size_t>(kNodes * kEach));
  EXPECT_EQ(states[0], states[1]);
}

TEST_P(ObjectInspect, ASingleCopyIsInspectedOnItsOwnerAndRefusedElsewhere) {
  const iso::object_type int_type = iso::test::make_int_type();
  const int status = run_inproc(2, opts(), [&](iso::node& node) {
    iso::object x(node, int_type, {.placement = object_placement::single_copy, .owner = 1});
    if (node.id() == 1) {
      x.call<std::int64_t>(int_ops::kInc, std::int64_t{5});
      EXPECT_EQ(x.inspect<std::int64_t>([](const std::int64_t& v) { return v; }), 5);
    }
    node.barrier();
    if (node.id() == 0) {
      expect_error(error_code::failed_precondition,
                   "inspect<long> on object 0 (Int): node 0 keeps no copy; the single copy is "
                   "on node 1",
                   [&] { (void)x.inspect<std::int64_t>([](const std::int64_t& v) { return v; }); });
      // Once it moved here, here it is read (the copy may still be on its way: waited for).
      x.migrate(0);
      EXPECT_EQ(x.inspect<std::int64_t>([](const std::int64_t& v) { return v; }), 5);
    }
    node.barrier();
    if (node.id() == 1) {
      expect_error(error_code::failed_precondition, "the single copy is on node 0",
                   [&] { (void)x.inspect<std::int64_t>([](const std::int64_t& v) { return v; }); });
    }
  });
  EXPECT_EQ(status, 0);
}

TEST(ObjectInspectMisuse, AnotherStateTypeIsRefusedNamingBoth) {
  const iso::object_type int_type = iso::test::make_int_type();
  // Built at the runtime level, without saying what its state is.
  iso::object_type untyped(
      "Untyped",
      {.create = [](std::span<const std::byte>) -> void* { return new int(); },
       .destroy = [](void* s) { delete static_cast<int*>(s); },
       .clone = [](const void* s) -> void* { return new int(*static_cast<const int*>(s)); }});
  const int status = run_inproc(1, iso::test::object_job_options(), [&](iso::node& node) {
    iso::object x(node, int_type, {.placement = object_placement::replicated});
    iso::object u(node, untyped, {.placement = object_placement::replicated});
    bool ran = false;
    expect_error(error_code::invalid_argument,
                 "inspect<double> on object 0 (Int): its state is a long, not a double", [&] {
                   (void)x.inspect<double>([&](const double& v) {
                     ran = true;
                     return v;
                   });
                 });
    expect_error(error_code::invalid_argument, "do not say what C++ type its state is", [&] {
      (void)u.inspect<int>([&](const int& v) {
        ran = true;
        return v;
      });
    });
    EXPECT_FALSE(ran);
  });
  EXPECT_EQ(status, 0);
}

TEST(ObjectInspectMisuse, RuntimeCallsInsideTheFunctionAreRefusedAndTheStateStays) {
  const iso::object_type log_type = make_log_type();
  const iso::object_type int_type = iso::test::make_int_type();
  const int status = run_inproc(2, iso::test::object_job_options(), [&](iso::node& node) {
    iso::object log(node, log_type, {.placement = object_placement::replicated});
    iso::object other(node, int_type, {.placement = object_placement::replicated});
    log.call<std::uint64_t>(kAppend, entry_of(node.id(), 0));
    // A fiber that would append if it ran: fibers switch only where one waits or yields.
    bool writer_ran = false;
    iso::fiber writer = iso::spawn(node, [&] {
      writer_ran = true;
      log.call<std::uint64_t>(kAppend, entry_of(node.id(), 1));
    });
    const char* inside = "inside object::inspect of object 0 (Log)";
    log.inspect<log_state>([&](const log_state& s) {
      const std::size_t before = s.entries.size();
      expect_error(error_code::failed_precondition, inside,
                   [&] { log.call<std::uint64_t>(kAppend, std::int64_t{-1}); });
      expect_error(error_code::failed_precondition, inside,
                   [&] { (void)log.read<std::uint64_t>(kSize); });
      expect_error(error_code::failed_precondition, inside,
                   [&] { other.call<std::int64_t>(int_ops::kInc, std::int64_t{1}); });
      expect_error(error_code::failed_precondition, inside, [&] { node.barrier(); });
      // Refusals of what waits or polls name where the node is, not some other place.
      const char* no_progress = "waiting or polling inside object::inspect's function";
      expect_error(error_code::failed_precondition, no_progress, [&] { iso::yield(node); });
      expect_error(error_code::failed_precondition, no_progress, [&] { node.poll(); });
      expect_error(error_code::failed_precondition,
                   "isochron started inside object::inspect's function",
                   [&] { iso::isochron refused(node); });
      EXPECT_FALSE(writer_ran);
      EXPECT_EQ(s.entries.size(), before);
      // Another object may be read at the same point.
      EXPECT_EQ(other.inspect<std::int64_t>([](const std::int64_t& v) { return v; }), 0);
      return 0;
    });
    // Afterwards the node goes on as before.
    writer.join();
    EXPECT_TRUE(writer_ran);
    log.call<std::uint64_t>(kAppend, entry_of(node.id(), 2));
    std::vector<std::int64_t> own = log.inspect<log_state>([&](const log_state& s) {
      std::vector<std::int64_t> v;
      for (std::int64_t e : s.entries) {
        if (e / 1000 == node.id()) v.push_back(e);
      }
      return v;
    });
    EXPECT_EQ(own, (std::vector<std::int64_t>{entry_of(node.id(), 0), entry_of(node.id(), 1),
                                              entry_of(node.id(), 2)}));
    node.barrier();
  });
  EXPECT_EQ(status, 0);
}

// A call that would send something whose answer it cannot wait for is refused before it
// goes out: a fork (its procedure must not run while its caller is told it failed), and the
// get() of a call started before (its handle keeps the call, whose result comes later).
TEST(ObjectInspectMisuse, AForkOrAGetInsideTheFunctionIsRefusedAndNothingIsLost) {
  const iso::object_type log_type = make_log_type();
  const iso::object_type int_type = iso::test::make_int_type();
  std::atomic<int> procedure_runs{0};
  const int status = run_inproc(2, iso::test::object_job_options(), [&](iso::node& node) {
    iso::register_procedure(node, "count",
                            [&](iso::node&, std::span<const std::byte>) { ++procedure_runs; });
    iso::object log(node, log_type, {.placement = object_placement::replicated});
    iso::object counter(node, int_type, {.placement = object_placement::replicated});
    node.barrier();
    iso::pending<std::int64_t> started =
        counter.start<std::int64_t>(int_ops::kInc, std::int64_t{5});
    log.inspect<log_state>([&](const log_state&) {
      expect_error(error_code::failed_precondition, "nothing was sent", [&] {
        (void)iso::fork(node, 1 - node.id(), "count", std::span<const std::byte>{});
      });
      expect_error(error_code::failed_precondition, "inside object::inspect of object 0 (Log)",
                   [&] { (void)started.get(); });
      return 0;
    });
    const std::int64_t got = started.get();
    EXPECT_TRUE(got == 5 || got == 10) << got;
    node.barrier();
    node.quiet();
    node.barrier();
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(procedure_runs.load(), 0);
}

TEST(ObjectInspectMisuse, RefusedInsideAnIsochronAndInsideAnOperation) {
  // The body inspects the object it runs on: its state may be half-changed there.
  thread_local iso::object* self = nullptr;
  const iso::object_type type =
      iso::typed_object<std::int64_t>("Peeking")
          .write(0, "peek",
                 [](std::int64_t& v, std::int64_t by) {
                   v += by;
                   return self->inspect<std::int64_t>([](const std::int64_t& s) { return s; });
                 })
          .type();
  const int status = run_inproc(1, iso::test::object_job_options(), [&](iso::node& node) {
    iso::object x(node, type, {.placement = object_placement::replicated});
    self = &x;
    expect_error(error_code::aborted,
                 "inspect<long> on object 0 (Peeking) inside an operation's guard or body",
                 [&] { x.call<std::int64_t>(0, std::int64_t{1}); });
    iso::isochron in(node);
    expect_error(error_code::failed_precondition, "inside an open isochron",
                 [&] { (void)x.inspect<std::int64_t>([](const std::int64_t& v) { return v; }); });
    in.end();
    // The throwing body changed nothing.
    EXPECT_EQ(x.inspect<std::int64_t>([](const std::int64_t& v) { return v; }), 0);
    self = nullptr;
  });
  EXPECT_EQ(status, 0);
}

// A copy on its way here is waited for, bounded: an owner busy elsewhere (it makes no
// progress, so it never ships the copy) is named when the wait gives up, and the copy still
// comes afterwards, nothing lost. A call waits the same way.
TEST(ObjectInspectWaits, ACopyThatDoesNotComeIsGivenUpOnNamingWhereItComesFrom) {
  const iso::object_type int_type = iso::test::make_int_type();
  iso::options opts = iso::test::object_job_options();
  opts.nic = iso::nic_mode::thread;  // node 0's NIC orders the move while its host is busy
  opts.object_call_timeout = std::chrono::milliseconds(200);
  std::atomic<bool> gave_up{false};
  const int status = run_inproc(2, opts, [&](iso::node& node) {
    iso::object x(node, int_type, {.placement = object_placement::single_copy, .owner = 0});
    if (node.id() == 0) x.call<std::int64_t>(int_ops::kInc, std::int64_t{7});
    node.barrier();
    if (node.id() == 0) {
      // No call into the runtime until node 1 gave up (or for 30 s, had its waits no bound).
      const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (!gave_up.load() && std::chrono::steady_clock::now() < limit) {
        std::this_thread::yield();
      }
      // Applies the move and ships the copy now, not only inside the barrier below, which
      // node 1 may pass at once: its inspection after it waits object_call_timeout too.
      node.poll();
    } else {
      x.migrate(1);
      const char* gone = "the object's copy did not come here from node 0";
      expect_error(error_code::deadline_exceeded, gone,
                   [&] { (void)x.inspect<std::int64_t>([](const std::int64_t& v) { return v; }); });
      expect_error(error_code::deadline_exceeded, gone,
                   [&] { (void)x.read<std::int64_t>(int_ops::kValue); });
      gave_up = true;
    }
    node.barrier();
    if (node.id() == 1) {
      EXPECT_EQ(x.inspect<std::int64_t>([](const std::int64_t& v) { return v; }), 7);
    }
    node.barrier();
  });
  EXPECT_EQ(status, 0);
  EXPECT_TRUE(gave_up.load());
}

}  // namespace
