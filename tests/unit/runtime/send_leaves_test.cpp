// A plain message, an object call or its reply, and an isochron from a node that slept in
// a wait are on their way when the call that sends them returns, whatever the NIC mode:
// with the NIC inline, a submission used to wait in the host queue for the sender's next
// call into the runtime, so a node that sent and then computed held its message (or the
// reply to a call it had just served) back for the whole computation. (A stream of
// isochrons leaves in batches, at waits and polls: see iso/isochron.hpp.)
//
// The sender here makes no call into the runtime after its send until the receiver says
// the message came; the receiver's word is bounded, so that a broken build fails instead
// of hanging.
#include <gtest/gtest.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <fstream>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "iso/iso.hpp"
#include "runtime/node_state.hpp"
#include "tests/support/inproc_job.hpp"

namespace {

class SendLeaves : public iso::test::nic_mode_test {};

// Set by the receiver once the message is in; the sender waits for it outside the runtime.
struct arrival {
  std::mutex mu;
  std::condition_variable cv;
  bool arrived = false;

  void announce() {
    const std::lock_guard lock(mu);
    arrived = true;
    cv.notify_all();
  }
  // True when the receiver announced the message within the (generous) bound.
  bool await() {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(20), [&] { return arrived; });
  }
};

TEST_P(SendLeaves, APlainMessageArrivesWhileItsSenderIsAway) {
  arrival a;
  bool arrived_while_away = false;
  const int status = iso::test::run_inproc(2, opts(), [&](iso::node& node) {
    if (node.id() == 0) {
      const std::array<std::byte, 64> payload{std::byte{7}};
      node.send(1, payload);
      arrived_while_away = a.await();  // no runtime call until the receiver has it
    } else {
      const iso::message m = node.receive();
      EXPECT_EQ(m.bytes().size(), 64U);
      a.announce();
    }
    node.barrier();
  });
  EXPECT_EQ(status, 0);
  EXPECT_TRUE(arrived_while_away)
      << "the message stayed on its sender until the sender called into the runtime again";
}

constexpr iso::operation_id kInc = 0;
constexpr iso::operation_id kAwait = 1;

// An integer with inc(by) and await(at_least), whose guard holds until the value is there.
iso::object_type counter_type() {
  using guard = bool (*)(const std::int64_t&, std::int64_t);
  using body = std::int64_t (*)(const std::int64_t&, std::int64_t);
  iso::typed_object<std::int64_t> t("Counter");
  t.write(kInc, "inc", [](std::int64_t& v, std::int64_t by) { return v += by; })
      .read(kAwait, "await",
            std::vector<std::pair<guard, body>>{
                {[](const std::int64_t& v, std::int64_t want) { return v >= want; },
                 [](const std::int64_t& v, std::int64_t) { return v; }}});
  return t.type();
}

// The owner of a single copy serves a call in the round that also ends its own wait on the
// copy; the reply must not wait for the owner's next call into the runtime.
TEST_P(SendLeaves, TheReplyToACallLeavesWithTheRoundThatServedIt) {
  arrival a;
  bool replied_while_away = false;
  const iso::object_type type = counter_type();
  const int status = iso::test::run_inproc(2, opts(), [&](iso::node& node) {
    iso::object copy(node, type, {.placement = iso::object_placement::single_copy, .owner = 1});
    if (node.id() == 0) {
      EXPECT_EQ(copy.call<std::int64_t>(kInc, std::int64_t{1}), 1);
      a.announce();
    } else {
      EXPECT_EQ(copy.read<std::int64_t>(kAwait, std::int64_t{1}), 1);
      replied_while_away = a.await();  // no runtime call until the caller has its reply
    }
    node.barrier();
  });
  EXPECT_EQ(status, 0);
  EXPECT_TRUE(replied_while_away)
      << "the reply stayed on the owner until the owner called into the runtime again";
}

// A call started on a single copy elsewhere is on its way when start() returns.
TEST_P(SendLeaves, AStartedCallReachesTheOwnerWhileItsCallerIsAway) {
  arrival a;
  bool served_while_away = false;
  const iso::object_type type = counter_type();
  const int status = iso::test::run_inproc(2, opts(), [&](iso::node& node) {
    iso::object copy(node, type, {.placement = iso::object_placement::single_copy, .owner = 1});
    if (node.id() == 0) {
      iso::pending<std::int64_t> call = copy.start<std::int64_t>(kInc, std::int64_t{1});
      served_while_away = a.await();  // no runtime call until the owner applied it
      EXPECT_EQ(call.get(), 1);
    } else {
      EXPECT_EQ(copy.read<std::int64_t>(kAwait, std::int64_t{1}), 1);
      a.announce();
    }
    node.barrier();
  });
  EXPECT_EQ(status, 0);
  EXPECT_TRUE(served_while_away)
      << "the request stayed on its caller until the caller called into the runtime again";
}

// A node that slept in a wait has parked its SIU: the others no longer wait for its
// tokens, and it may stamp again only once every copy of its TM has answered its unpark.
// Its next isochron must still be on its way when end() returns. It used to wait in the
// host queue, not even asking for the unpark, until the sender's next call into the
// runtime; two nodes exchanging rows that way took turns instead of computing together.
// Inline only: a NIC thread unparks by itself.
iso::options inline_job() {
  iso::options o;
  o.nic = iso::nic_mode::inline_poll;
  o.barrier_timeout = std::chrono::seconds(60);
  return o;
}

// Waits, on node 0, until its SIU has parked: its idle rounds end in a sleep, which parks
// the SIU first.
void park(iso::runtime::event_loop& loop, absl::Duration unpark_wait) {
  iso::runtime::waiter_policy policy = loop.policy();
  policy.doze = absl::ZeroDuration();
  policy.unpark_wait = unpark_wait;
  loop.set_policy(policy);
  ASSERT_TRUE(loop.wait_for([&] { return !loop.nic().may_stamp(); }).ok());
}

// With a copy of the TM on every node (the default on one switch).
TEST(SendLeavesAfterParking, AnIsochronEndedByAParkedNodeArrivesWhileItsSenderIsAway) {
  arrival a;
  bool arrived_while_away = false;
  const int status = iso::test::run_inproc(2, inline_job(), [&](iso::node& node) {
    iso::runtime::event_loop& loop = iso::detail::node_state::of(node).loop();
    if (node.id() == 0) {
      park(loop, absl::Seconds(20));  // a slow answer is not what this checks
      const std::array<std::byte, 64> payload{std::byte{7}};
      {
        iso::isochron iso(node);
        iso.send(1, payload);
      }
      arrived_while_away = a.await();  // no runtime call until the receiver has it
    } else {
      const iso::notice n = node.iso_receive();
      EXPECT_EQ(n.bytes.size(), 64U);
      a.announce();
    }
    node.barrier();
  });
  EXPECT_EQ(status, 0);
  EXPECT_TRUE(arrived_while_away)
      << "the isochron stayed on its parked sender until the sender called into the runtime";
}

// With the switch's only TM on the sender, it answers the unpark at once, in the round that
// asks; that round has already passed the isochron by, so another must take it. (It does
// not arrive before the sender's next call anyway: that TM runs only inside the sender's
// calls.)
TEST(SendLeavesAfterParking, AnIsochronEndedByAParkedTmHostLeavesItsQueue) {
  char path[] = "/tmp/iso-topology-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  std::ofstream(path) << R"(switch { name: "s" node: 0 node: 1 tm_host: 0 })";
  iso::options o = inline_job();
  o.topology_file = path;
  bool left = false;
  const int status = iso::test::run_inproc(2, o, [&](iso::node& node) {
    iso::runtime::event_loop& loop = iso::detail::node_state::of(node).loop();
    if (node.id() == 0) {
      park(loop, absl::Seconds(20));
      const std::array<std::byte, 8> payload{std::byte{3}};
      {
        iso::isochron iso(node);
        iso.send(1, payload);
      }
      left = loop.nic().may_stamp() && !loop.nic().channel().nic_has_submissions();
    } else {
      EXPECT_EQ(node.iso_receive().bytes.size(), 8U);
    }
    node.barrier();
  });
  ::unlink(path);
  EXPECT_EQ(status, 0);
  EXPECT_TRUE(left) << "the isochron was still in the sender's queue when end() returned";
}

// Seconds of this thread's CPU time.
double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// The wait for the unpark is bounded, sleeps, and is paid once: here the node that must
// answer is away for good, and the isochrons stay queued until it is back.
TEST(UnansweredUnpark, CostsOneBoundedSleepingWait) {
  arrival away, back;
  double first_s = -1, first_cpu_s = -1, second_s = -1;
  const int status = iso::test::run_inproc(2, inline_job(), [&](iso::node& node) {
    iso::runtime::event_loop& loop = iso::detail::node_state::of(node).loop();
    if (node.id() == 1) {
      away.announce();
      EXPECT_TRUE(back.await());  // away: its NIC answers nothing meanwhile
      EXPECT_EQ(node.iso_receive().bytes.size(), 8U);
      EXPECT_EQ(node.iso_receive().bytes.size(), 8U);
    } else {
      ASSERT_TRUE(away.await());  // node 1 has left the runtime: no round of it answers
      park(loop, absl::Seconds(1));
      const std::array<std::byte, 8> payload{std::byte{1}};
      auto end_one = [&] {
        const auto start = std::chrono::steady_clock::now();
        {
          iso::isochron iso(node);
          iso.send(1, payload);
        }
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      };
      const double cpu_before = thread_cpu_seconds();
      first_s = end_one();
      first_cpu_s = thread_cpu_seconds() - cpu_before;
      second_s = end_one();
      back.announce();
    }
    node.barrier();
  });
  EXPECT_EQ(status, 0);
  EXPECT_GE(first_s, 0.9) << "end() did not wait for the unpark's answers";
  EXPECT_LT(first_s, 10.0) << "end() waited past its bound";
  EXPECT_LT(first_cpu_s, first_s / 2) << "the wait spun instead of sleeping";
  EXPECT_LT(second_s, 0.5) << "a second end() waited again for the same unpark";
}

INSTANTIATE_TEST_SUITE_P(NicModes, SendLeaves, iso::test::both_nic_modes(),
                         iso::test::nic_mode_name);

}  // namespace
