// The isotach receive queue, signals and isotach barriers, as inproc jobs with both NIC
// modes: one order and one logical time for every notice on every node, coalescing,
// strong and weak completion, back-to-back barriers, and misuse.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <tuple>

#include "absl/strings/str_format.h"
#include "iso/iso.hpp"
#include "tests/support/inproc_job.hpp"
#include "tests/support/test_support.hpp"

namespace {

using iso::test::run_inproc;

class Group : public iso::test::nic_mode_test {};

INSTANTIATE_TEST_SUITE_P(NicModes, Group, iso::test::both_nic_modes(), iso::test::nic_mode_name);

struct sequenced {
  std::uint32_t seq;
  std::uint32_t round;
};

// What a notice says, with the logical time it came at: equal on every node that gets it.
using record = std::tuple<int, std::uint64_t, std::uint32_t, std::uint32_t, std::uint64_t,
                          std::uint32_t>;  // kind, pulse, source/channel, count, instance, seq

record describe(const iso::notice& n) {
  switch (n.what) {
    case iso::notice::kind::message: {
      sequenced s{};
      std::memcpy(&s, n.bytes.data(), sizeof(s));
      return {1, n.pulse, n.source, 0, 0, s.seq};
    }
    case iso::notice::kind::signal:
      return {2, n.pulse, n.channel, n.count, 0, 0};
    case iso::notice::kind::barrier:
      return {3, n.pulse, n.channel, static_cast<std::uint32_t>(n.mode), n.instance, 0};
  }
  return {};
}

// Every node broadcasts isotach messages, signals now and then, and takes part in barriers
// back to back on two channels, one weak and one strong. Every node must record the same
// notices in the same order at the same pulses, and see each sender's messages in order.
TEST_P(Group, EveryNodeSeesOneSequenceOfNoticesAtOneLogicalTime) {
  constexpr int kNodes = 3;
  constexpr std::uint32_t kRounds = 40;
  std::mutex mu;
  std::vector<std::vector<record>> seen(kNodes);
  const int status = run_inproc(kNodes, opts(), [&](iso::node& node) {
    std::vector<record> mine;
    std::vector<std::uint32_t> next_seq(node.count(), 0);
    std::uint32_t seq = 0;
    auto take = [&](const iso::notice& n) {
      if (n.what == iso::notice::kind::message) {
        sequenced s{};
        ASSERT_EQ(n.bytes.size(), sizeof(s) + 100 * (n.source + 1));
        std::memcpy(&s, n.bytes.data(), sizeof(s));
        EXPECT_EQ(s.seq, next_seq[n.source]++) << "from node " << n.source;
        for (std::size_t i = sizeof(s); i < n.bytes.size(); ++i) {
          ASSERT_EQ(n.bytes[i], static_cast<std::byte>(s.seq + i)) << "byte " << i;
        }
      }
      mine.push_back(describe(n));
    };
    for (std::uint32_t round = 0; round < kRounds; ++round) {
      for (int k = 0; k < 3; ++k) {
        std::vector<std::byte> payload(sizeof(sequenced) + 100 * (node.id() + 1));
        const sequenced s{seq, round};
        std::memcpy(payload.data(), &s, sizeof(s));
        for (std::size_t i = sizeof(s); i < payload.size(); ++i) {
          payload[i] = static_cast<std::byte>(seq + i);
        }
        ++seq;
        iso::isochron iso(node);
        for (iso::node_id to = 0; to < node.count(); ++to) iso.send(to, payload);
      }
      if ((round + node.id()) % 4 == 0) node.signal(2);
      // Channel 5: every node signals twice in one isochron, in the same rounds; the two
      // execute in one pulse, so they always coalesce (and with other nodes' when the
      // pulses meet).
      if (round % 10 == 0) {
        iso::isochron iso(node);
        iso.signal(5);
        iso.signal(5);
      }
      const iso::channel_id channel = round % 2;
      node.start_barrier(channel,
                         channel == 0 ? iso::barrier_mode::strong : iso::barrier_mode::weak);
      for (;;) {
        iso::notice n = node.iso_receive();
        const bool done = n.what == iso::notice::kind::barrier && n.channel == channel;
        take(n);
        if (done) break;
      }
      EXPECT_TRUE(node.barrier_complete(channel));
    }
    node.barrier();
    while (std::optional<iso::notice> n = node.try_iso_receive()) take(*n);
    for (iso::node_id from = 0; from < node.count(); ++from) {
      EXPECT_EQ(next_seq[from], 3 * kRounds) << "messages from node " << from;
    }
    std::lock_guard lock(mu);
    seen[node.id()] = std::move(mine);
  });
  ASSERT_EQ(status, 0);
  for (int n = 1; n < kNodes; ++n) EXPECT_EQ(seen[n], seen[0]) << "node " << n;
  int barriers = 0;
  int signals = 0;
  std::uint32_t coalesced = 0;
  for (const record& r : seen[0]) {
    if (std::get<0>(r) == 3) ++barriers;
    if (std::get<0>(r) == 2) {
      ++signals;
      coalesced += std::get<3>(r);
      if (std::get<2>(r) == 5) {
        EXPECT_GE(std::get<3>(r), 2u) << "a pair did not coalesce";
      }
    }
  }
  EXPECT_EQ(barriers, static_cast<int>(kRounds));
  // Channel 2: every node every fourth round; channel 5: every node twice in 4 rounds.
  EXPECT_EQ(coalesced, kNodes * kRounds / 4 + kNodes * 4 * 2);
  EXPECT_LT(signals, static_cast<int>(coalesced)) << "no signals coalesced";
}

// A strong barrier's notice follows every message its participants sent before it; a weak
// one's precedes the messages of the pulse it completes in.
TEST_P(Group, StrongBarrierFollowsEarlierMessagesAndWeakPrecedesItsPulse) {
  constexpr int kNodes = 3;
  std::atomic<int> failures{0};
  const int status = run_inproc(kNodes, opts(), [&](iso::node& node) {
    for (int round = 0; round < 20; ++round) {
      const iso::barrier_mode mode =
          round % 2 == 0 ? iso::barrier_mode::strong : iso::barrier_mode::weak;
      {
        iso::isochron iso(node);
        const std::uint32_t r = static_cast<std::uint32_t>(round);
        for (iso::node_id to = 0; to < node.count(); ++to) {
          iso.send(to, std::as_bytes(std::span(&r, 1)));
        }
      }
      node.start_barrier(3, mode);
      std::uint32_t messages = 0;
      std::uint64_t last_message_pulse = 0;
      for (;;) {
        iso::notice n = node.iso_receive();
        if (n.what == iso::notice::kind::message) {
          ++messages;
          last_message_pulse = n.pulse;
          continue;
        }
        ASSERT_EQ(n.what, iso::notice::kind::barrier);
        EXPECT_EQ(n.instance, static_cast<std::uint64_t>(round));
        EXPECT_EQ(n.mode, mode);
        if (mode == iso::barrier_mode::strong && messages != node.count()) ++failures;
        if (mode == iso::barrier_mode::weak && last_message_pulse >= n.pulse && messages != 0) {
          ++failures;  // a message of the completion pulse came before the weak notice
        }
        break;
      }
      // Weak: this round's messages may come after the notice; collect them.
      while (messages < node.count()) {
        iso::notice n = node.iso_receive();
        ASSERT_EQ(n.what, iso::notice::kind::message);
        ++messages;
      }
    }
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(failures.load(), 0);
}

TEST_P(Group, MisuseIsAClearError) {
  std::atomic<int> checked{0};
  const int status = run_inproc(2, opts(), [&](iso::node& node) {
    auto expect_error = [&](iso::error_code code, const char* fragment, auto&& action) {
      checked += iso::test::expect_error(code, fragment, action);
    };
    expect_error(iso::error_code::invalid_argument, "channels are 0..7",
                 [&] { node.signal(iso::kChannels); });
    expect_error(iso::error_code::invalid_argument, "channels are 0..7",
                 [&] { node.start_barrier(9, iso::barrier_mode::weak); });
    node.start_barrier(1, iso::barrier_mode::weak);
    expect_error(iso::error_code::failed_precondition, "has not completed here yet",
                 [&] { node.start_barrier(1, iso::barrier_mode::weak); });
    {
      iso::isochron iso(node);
      expect_error(iso::error_code::failed_precondition, "already open", [&] { node.signal(0); });
    }
    iso::notice n = node.iso_receive();
    EXPECT_EQ(n.what, iso::notice::kind::barrier);
    node.start_barrier(1, iso::barrier_mode::weak);  // allowed again once completed
    EXPECT_EQ(node.iso_receive().instance, 1u);
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(checked.load(), 2 * 4);
}

// Nodes that start one barrier in different modes have a bug; the job fails, naming it.
// Every node finds the mismatch when the barrier executes, but one may learn first that the
// other has failed (and stopped): at least one names the modes, and none succeeds.
TEST_P(Group, MixedModesFailTheJob) {
  iso::test::allow_log_lines_in_this_test();
  std::atomic<int> named{0};
  const int status = run_inproc(2, opts(), [&](iso::node& node) {
    node.start_barrier(0, node.id() == 0 ? iso::barrier_mode::weak : iso::barrier_mode::strong);
    try {
      (void)node.iso_receive();
      ADD_FAILURE() << "a barrier with mixed modes completed";
    } catch (const iso::error& e) {
      const std::string what = e.what();
      if (what.find("arrived") != std::string::npos) {
        ++named;
      } else {
        const std::string other = absl::StrFormat("node %u failed", 1 - node.id());
        EXPECT_NE(what.find(other), std::string::npos) << what;
      }
      throw;
    }
  });
  EXPECT_NE(status, 0);
  EXPECT_GE(named.load(), 1);
}

}  // namespace
