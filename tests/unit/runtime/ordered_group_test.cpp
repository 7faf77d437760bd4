// iso::ordered_group through real nodes (inproc jobs, the NIC on its own thread and
// inline), in both orders (sequencer and isotach): the Derecho delivery-order check (every
// member records (sender, index, digest) of what it receives; each sender's messages come
// in order and every member of a group has the same sequence), bad input, a member that
// does not poll under a flood, and the isotach order's atomicity with shared variables.
#include "iso/ordered_group.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/time/clock.h"
#include "iso/iso.hpp"
#include "nicfw/multicast_service.hpp"
#include "runtime/node_state.hpp"
#include "tests/support/inproc_job.hpp"
#include "tests/support/test_support.hpp"

namespace {

using iso::node_id;
using iso::test::run_inproc;

struct record {
  node_id sender;
  std::uint32_t index;
  std::uint64_t digest;
  bool operator==(const record&) const = default;
};

// A message: (index, then bytes that depend on sender and index), `size` bytes in all.
std::vector<std::byte> make_message(node_id sender, std::uint32_t index, std::size_t size) {
  std::vector<std::byte> m(std::max<std::size_t>(size, 4));
  std::memcpy(m.data(), &index, 4);
  for (std::size_t i = 4; i < m.size(); ++i) m[i] = static_cast<std::byte>(sender + index * 7 + i);
  return m;
}

std::uint64_t digest(std::span<const std::byte> bytes) {
  std::uint64_t h = 0xcbf29ce484222325;
  for (std::byte b : bytes) h = (h ^ static_cast<std::uint64_t>(b)) * 0x100000001b3;
  return h;
}

// What every member of every group recorded, by (group, node).
class recorder {
 public:
  void add(int group, node_id n, std::vector<record> seq) {
    std::lock_guard lock(mu_);
    seqs_[{group, n}] = std::move(seq);
  }
  // Identical sequences at every member; per-sender FIFO with `each` messages per sender.
  void check(int group, const std::vector<node_id>& members, std::uint32_t each,
             const std::string& where) {
    check(group, members, members, each, where);
  }
  void check(int group, const std::vector<node_id>& members, const std::vector<node_id>& senders,
             std::uint32_t each, const std::string& where) {
    const std::vector<record>& first = seqs_[{group, members.front()}];
    ASSERT_EQ(first.size(), senders.size() * each) << where;
    std::map<node_id, std::uint32_t> next;
    for (const record& r : first) {
      ASSERT_EQ(r.index, next[r.sender]) << where << ": sender " << r.sender << " out of order";
      ++next[r.sender];
    }
    for (node_id m : members) {
      EXPECT_EQ((seqs_[{group, m}]), first) << where << ": node " << m << " saw another order";
    }
  }

 private:
  std::mutex mu_;
  std::map<std::pair<int, node_id>, std::vector<record>> seqs_;
};

// Every member submits `each` messages (sizes from `size_of`) and receives everything.
std::vector<record> exchange(iso::ordered_group& g, node_id self, std::uint32_t each,
                             const std::function<std::size_t(std::uint32_t)>& size_of) {
  std::vector<record> seq;
  const std::size_t total = g.members().size() * each;
  for (std::uint32_t k = 0; k < each; ++k) {
    const std::vector<std::byte> m = make_message(self, k, size_of(k));
    g.submit(m);
    // Take what has come meanwhile, as a replica would.
    while (auto got = g.try_receive()) {
      std::uint32_t index = 0;
      std::memcpy(&index, got->bytes.data(), 4);
      seq.push_back({got->sender, index, digest(got->bytes)});
    }
  }
  while (seq.size() < total) {
    iso::ordered_message got = g.receive();
    std::uint32_t index = 0;
    std::memcpy(&index, got.bytes.data(), 4);
    EXPECT_EQ(digest(got.bytes), digest(make_message(got.sender, index, got.bytes.size())));
    seq.push_back({got.sender, index, digest(got.bytes)});
  }
  return seq;
}

// Every case runs for both NIC modes and both orders.
class OrderedGroup : public testing::TestWithParam<std::tuple<iso::nic_mode, iso::order_kind>> {
 protected:
  [[nodiscard]] iso::nic_mode mode() const { return std::get<0>(GetParam()); }
  [[nodiscard]] iso::order_kind order() const { return std::get<1>(GetParam()); }
  // The case's NIC mode and order, and a barrier timeout that bounds a hung case.
  [[nodiscard]] iso::options opts() const {
    iso::options o;
    o.nic = mode();
    o.ordering = order();
    o.barrier_timeout = std::chrono::seconds(60);
    return o;
  }
};
INSTANTIATE_TEST_SUITE_P(
    NicModesAndOrders, OrderedGroup,
    testing::Combine(iso::test::both_nic_modes(),
                     testing::Values(iso::order_kind::sequencer, iso::order_kind::isotach)),
    [](const testing::TestParamInfo<OrderedGroup::ParamType>& p) {
      return std::string(std::get<0>(p.param) == iso::nic_mode::thread ? "Thread" : "Inline") +
             (std::get<1>(p.param) == iso::order_kind::isotach ? "Isotach" : "Sequencer");
    });

// The whole job, 2, 5 and 8 nodes, every tree shape, small (batched) messages.
TEST_P(OrderedGroup, EveryMemberReceivesOneOrderForEveryShapeAndSize) {
  for (const char* shape : {"binary", "chain", "binomial"}) {
    for (int nodes : {2, 5, 8}) {
      if (mode() == iso::nic_mode::thread && nodes == 8) continue;  // 2 cores: inline only
      iso::options o = opts();
      o.multicast_tree = shape;
      recorder rec;
      constexpr std::uint32_t kEach = 200;
      const int status = run_inproc(nodes, o, [&](iso::node& node) {
        std::vector<node_id> all(node.count());
        for (node_id i = 0; i < node.count(); ++i) all[i] = i;
        iso::ordered_group g(node, all);
        rec.add(0, node.id(),
                exchange(g, node.id(), kEach, [](std::uint32_t k) { return 8 + k % 120; }));
        node.barrier();
      });
      ASSERT_EQ(status, 0) << shape << " " << nodes;
      std::vector<node_id> all(nodes);
      for (int i = 0; i < nodes; ++i) all[i] = i;
      rec.check(0, all, kEach, std::string(shape) + " " + std::to_string(nodes) + " nodes");
    }
  }
}

// Overlapping subsets with concurrent senders and large messages (up to the maximum).
TEST_P(OrderedGroup, SubsetAndOverlappingGroupsWithLargeMessages) {
  const std::vector<std::vector<node_id>> groups = {{0, 2, 3}, {1, 2, 3, 4}, {0, 4}};
  recorder rec;
  constexpr std::uint32_t kEach = 40;
  const int status = run_inproc(5, opts(), [&](iso::node& node) {
    std::vector<iso::ordered_group> gs;
    gs.reserve(groups.size());
    for (const auto& members : groups) gs.emplace_back(node, members);
    for (std::size_t i = 0; i < gs.size(); ++i) {
      if (!gs[i].member()) {
        EXPECT_THROW(gs[i].submit(make_message(node.id(), 0, 8)), iso::error);
        continue;
      }
      const std::size_t max = gs[i].max_message_size();
      rec.add(static_cast<int>(i), node.id(),
              exchange(gs[i], node.id(), kEach, [max](std::uint32_t k) -> std::size_t {
                return k == 5 ? max : k % 10 == 3 ? 300'000 : 64;
              }));
    }
    node.barrier();
  });
  ASSERT_EQ(status, 0);
  for (std::size_t i = 0; i < groups.size(); ++i) {
    rec.check(static_cast<int>(i), groups[i], kEach, "group " + std::to_string(i));
  }
}

// Bad input gets a precise error and sends nothing: the first message received afterwards
// is the first valid one.
TEST_P(OrderedGroup, BadInputIsRefusedAndNothingIsSent) {
  iso::test::allow_log_lines_in_this_test();
  const int status = run_inproc(3, opts(), [&](iso::node& node) {
    const auto code_of = [&](auto&& call) {
      try {
        call();
      } catch (const iso::error& e) {
        return std::make_pair(e.code(), std::string(e.what()));
      }
      return std::make_pair(iso::error_code::unknown, std::string("no error"));
    };
    auto [empty, empty_text] = code_of([&] { iso::ordered_group g(node, {}); });
    EXPECT_EQ(empty, iso::error_code::invalid_argument) << empty_text;
    const std::vector<node_id> stranger = {0, 3};
    auto [bad, bad_text] = code_of([&] { iso::ordered_group g(node, stranger); });
    EXPECT_EQ(bad, iso::error_code::invalid_argument);
    EXPECT_NE(bad_text.find("member 3"), std::string::npos) << bad_text;
    const std::vector<node_id> twice = {1, 0, 1};
    auto [dup, dup_text] = code_of([&] { iso::ordered_group g(node, twice); });
    EXPECT_NE(dup_text.find("node 1 twice"), std::string::npos) << dup_text;

    const std::vector<node_id> all = {0, 1, 2};
    iso::ordered_group g(node, all);
    EXPECT_EQ(g.order(), order());
    const std::vector<std::byte> huge(g.max_message_size() + 1);
    auto [over, over_text] = code_of([&] { g.submit(huge); });
    EXPECT_EQ(over, iso::error_code::invalid_argument);
    EXPECT_NE(over_text.find("exceeds"), std::string::npos) << over_text;
    {
      iso::isochron in(node);
      auto [inside, inside_text] = code_of([&] { g.submit(make_message(node.id(), 0, 8)); });
      EXPECT_EQ(inside, iso::error_code::failed_precondition) << inside_text;
      auto [into, into_text] = code_of([&] { g.submit(in, huge); });
      if (order() == iso::order_kind::sequencer) {
        EXPECT_EQ(into, iso::error_code::failed_precondition) << into_text;
        EXPECT_NE(into_text.find("sequencer"), std::string::npos) << into_text;
      } else {
        EXPECT_EQ(into, iso::error_code::invalid_argument) << into_text;
      }
    }
    if (node.id() == 1) g.submit(make_message(1, 0, 16));
    const iso::ordered_message m = g.receive();
    EXPECT_EQ(m.sender, 1u);
    EXPECT_EQ(m.bytes.size(), 16u) << "something other than the valid message arrived";
    node.barrier();
    EXPECT_FALSE(g.try_receive().has_value());
  });
  EXPECT_EQ(status, 0);
}

// A member that does not call into the runtime for a second while the others flood: the
// senders stall (the NICs hold a bounded number of messages), then everything arrives in
// one order.
TEST_P(OrderedGroup, ASlowMemberLosesNothingAndBoundsMemory) {
  recorder rec;
  constexpr std::uint32_t kEach = 3000;
  const int status = run_inproc(4, opts(), [&](iso::node& node) {
    const std::vector<node_id> all = {0, 1, 2, 3};
    iso::ordered_group g(node, all);
    std::vector<record> seq;
    if (node.id() == 3) {
      absl::SleepFor(absl::Seconds(1));  // the slow member: no polls at all
    } else {
      for (std::uint32_t k = 0; k < kEach; ++k) g.submit(make_message(node.id(), k, 200));
      g.flush();
    }
    while (seq.size() < 3 * kEach) {
      iso::ordered_message m = g.receive();
      std::uint32_t index = 0;
      std::memcpy(&index, m.bytes.data(), 4);
      seq.push_back({m.sender, index, digest(m.bytes)});
    }
    // Per NIC: the credit window to each peer, and its own window. (The isotach order's
    // bound is its credits, which the isotach tests check.)
    EXPECT_LE(iso::detail::node_state::of(node).multicast().peak_messages_held(),
              std::size_t{iso::nicfw::multicast_options{}.window} * 4);
    rec.add(0, node.id(), std::move(seq));
    node.barrier();
  });
  ASSERT_EQ(status, 0);
  rec.check(0, {0, 1, 2, 3}, {0, 1, 2}, kEach, "flood");
}

// A member that stops calling into the runtime for good: its senders' waits for flow control
// end after the barrier timeout with deadline_exceeded, instead of lasting for ever. Node 1
// stalls without a single call until node 0 has had its error.
TEST_P(OrderedGroup, ASenderStalledByAMemberThatNeverTakesGetsAnError) {
  iso::options o = opts();
  o.barrier_timeout = std::chrono::milliseconds(1500);
  std::atomic<bool> released{false};
  std::string error;
  const int status = run_inproc(2, o, [&](iso::node& node) {
    iso::ordered_group g(node, std::vector<node_id>{0, 1});
    if (node.id() == 1) {
      while (!released) std::this_thread::yield();
    } else {
      try {
        for (std::uint32_t k = 0; k < 100'000; ++k) {
          g.submit(make_message(0, k, 4000));
          g.flush();
        }
      } catch (const iso::error& e) {
        EXPECT_EQ(e.code(), iso::error_code::deadline_exceeded) << e.what();
        error = e.what();
      }
      released = true;
    }
    node.barrier();
  });
  EXPECT_EQ(status, 0);
  ASSERT_FALSE(error.empty()) << "node 0 sent 100000 messages to a member that took none";
  if (order() == iso::order_kind::sequencer) {
    EXPECT_NE(error.find("ordered group"), std::string::npos) << error;
    EXPECT_NE(error.find("not calling into the runtime"), std::string::npos) << error;
  }
}

// The isotach order: a message submitted into an isochron beside a write is seen with it,
// atomically, by every member. Node 0 writes x = k and submits message k in one isochron;
// every member (node 0 too) checks both ways round: having read x = v, it has message v
// already (it was filed when the pulse executed, before any later read could run), and
// having received message k, it reads x >= k. Node 3 is no member and only reads.
class IsotachOrderedGroup : public iso::test::nic_mode_test {};
INSTANTIATE_TEST_SUITE_P(NicModes, IsotachOrderedGroup, iso::test::both_nic_modes(),
                         iso::test::nic_mode_name);

TEST_P(IsotachOrderedGroup, MessageAndWriteInOneIsochronAreSeenAtomically) {
  constexpr std::uint64_t kMessages = 300;
  const int status = run_inproc(4, opts(), [&](iso::node& node) {
    const iso::shared_array<std::uint64_t> x = node.allocate<std::uint64_t>(1);
    const std::vector<node_id> members = {0, 1, 2};
    iso::ordered_group g(node, members, iso::order_kind::isotach);
    node.barrier();
    if (node.id() == 0) {
      for (std::uint64_t k = 1; k <= kMessages; ++k) {
        iso::isochron in(node);
        in.write(x[0], k);
        g.submit(in, std::as_bytes(std::span(&k, 1)));
      }
    }
    const auto read_x = [&] {
      iso::value<std::uint64_t> v = [&] {
        iso::isochron in(node);
        return in.read(x[0]);
      }();
      return v.get();
    };
    if (!g.member()) {
      std::uint64_t last = 0;
      while (last < kMessages) {
        const std::uint64_t v = read_x();
        EXPECT_GE(v, last) << "x went back";
        last = v;
      }
      node.barrier();
      return;
    }
    std::uint64_t received = 0;
    const auto take = [&](const iso::ordered_message& m) {
      std::uint64_t k = 0;
      ASSERT_EQ(m.bytes.size(), sizeof(k));
      std::memcpy(&k, m.bytes.data(), sizeof(k));
      ASSERT_EQ(k, received + 1) << "node " << node.id() << " lost or reordered a message";
      received = k;
    };
    while (received < kMessages) {
      const std::uint64_t v = read_x();
      // Filed already: these come out of the inbox without waiting.
      while (received < v) {
        std::optional<iso::ordered_message> m = g.try_receive();
        ASSERT_TRUE(m.has_value())
            << "node " << node.id() << " read x = " << v << " but has only message " << received;
        take(*m);
      }
      if (received == kMessages) break;
      take(g.receive());
      EXPECT_GE(read_x(), received)
          << "node " << node.id() << " received message " << received << " before the write";
    }
    node.barrier();
  });
  EXPECT_EQ(status, 0);
}

// Many groups over the same nodes, every member flooding every group before it receives
// anything: the groups' messages cross on every link, in both directions. With 8 groups of
// 4 nodes the NICs' forwarding waited on each other's credits in a cycle (every link's
// window full of messages waiting to go on), and the job hung in flush(); each sequenced
// group now has credits of its own on every link.
TEST_P(OrderedGroup, ManyOverlappingGroupsFloodingAtOnceDoNotDeadlock) {
  constexpr std::size_t kGroups = 8;
  constexpr std::uint32_t kEach = 100;
  const std::vector<node_id> all = {0, 1, 2, 3};
  for (const char* shape : {"chain", "binary"}) {
    recorder rec;
    iso::options o = opts();
    o.multicast_tree = shape;
    const int status = run_inproc(4, o, [&](iso::node& node) {
      std::vector<iso::ordered_group> gs;
      gs.reserve(kGroups);
      for (std::size_t i = 0; i < kGroups; ++i) gs.emplace_back(node, all);
      for (std::uint32_t k = 0; k < kEach; ++k) {
        for (iso::ordered_group& g : gs) {
          g.submit(make_message(node.id(), k, 2000));
          g.flush();  // one multicast each: no batching hides the traffic
        }
      }
      for (std::size_t i = 0; i < kGroups; ++i) {
        std::vector<record> seq;
        while (seq.size() < all.size() * kEach) {
          const iso::ordered_message got = gs[i].receive();
          std::uint32_t index = 0;
          std::memcpy(&index, got.bytes.data(), 4);
          seq.push_back({got.sender, index, digest(got.bytes)});
        }
        rec.add(static_cast<int>(i), node.id(), std::move(seq));
      }
      node.barrier();
    });
    ASSERT_EQ(status, 0) << shape;
    for (std::size_t i = 0; i < kGroups; ++i) {
      rec.check(static_cast<int>(i), all, kEach,
                std::string(shape) + " group " + std::to_string(i));
    }
  }
}

}  // namespace
