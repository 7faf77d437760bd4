// iso::run with an inproc job: the body runs once per node on its own thread, nodes can
// message each other (FIFO per pair, self included), and one failing node fails the job
// without hanging the others.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <set>
#include <vector>

#include "iso/iso.hpp"
#include "tests/support/test_support.hpp"

namespace {

void as_inproc_job(int nodes) {
  ::setenv("ISO_SIZE", std::to_string(nodes).c_str(), 1);
  ::setenv("ISO_TRANSPORT", "inproc", 1);
  ::unsetenv("ISO_RANK");
  ::unsetenv("ISO_SHM_FD");
}

TEST(RunInproc, EveryNodeRunsOnceAndMessagesArriveInOrder) {
  as_inproc_job(3);
  std::mutex mu;
  std::set<iso::node_id> ids;
  std::atomic<int> bad{0};
  constexpr std::uint32_t kMessages = 1000;
  int status = iso::run(0, nullptr, [&](iso::node& node) {
    {
      std::lock_guard lock(mu);
      ids.insert(node.id());
    }
    if (node.count() != 3) ++bad;
    for (std::uint32_t i = 0; i < kMessages; ++i) {
      for (iso::node_id to = 0; to < node.count(); ++to) {
        const std::uint32_t m[2] = {node.id(), i};
        node.send(to, std::as_bytes(std::span(m)));
      }
    }
    std::vector<std::uint32_t> next(node.count(), 0);
    for (std::uint32_t got = 0; got < kMessages * node.count(); ++got) {
      iso::message msg = node.receive();
      std::uint32_t m[2];
      std::memcpy(m, msg.bytes().data(), sizeof(m));
      if (m[0] != msg.source() || m[1] != next[msg.source()]++) ++bad;
    }
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(ids, (std::set<iso::node_id>{0, 1, 2}));
  EXPECT_EQ(bad.load(), 0);
}

std::vector<std::byte> pattern(std::size_t size, int seed) {
  std::vector<std::byte> bytes(size);
  for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<std::byte>(i * 7 + seed);
  return bytes;
}

bool same(std::span<const std::byte> a, std::span<const std::byte> b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

// A received message's bytes stay where the NIC delivered them (no copy) while it is the
// latest; a message still held at the next receive moves into a copy of its own, and the
// sender's credits come back when a message is dropped or moved.
TEST(RunInproc, ReceivedMessagesStayInPlaceUntilTheNextReceive) {
  as_inproc_job(2);
  std::atomic<int> bad{0};
  int status = iso::run(0, nullptr, [&](iso::node& node) {
    constexpr std::size_t kSize = 256;
    if (node.id() == 1) {
      for (int i = 0; i < 3; ++i) node.send(0, pattern(kSize, i));
      node.barrier();
      return;
    }
    auto buffered = [&] { return node.status().peers[1].messages.buffered; };
    // All three delivered (and charged) before the first receive, so every figure below is
    // exact: polling for notices takes plain messages into the inbox without receiving them.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (node.status().messages_waiting < 3) {
      if (std::chrono::steady_clock::now() > deadline) {
        ++bad;
        return;
      }
      (void)node.try_iso_receive();
    }
    const std::uint64_t each = buffered() / 3;  // one message's charge
    if (each < kSize || buffered() != 3 * each) ++bad;
    {
      iso::message first = node.receive();
      if (!same(first.bytes(), pattern(kSize, 0))) ++bad;
      if (buffered() != 3 * each) ++bad;  // still in the queue, still charged to the sender
    }
    if (buffered() != 2 * each) ++bad;
    iso::message second = node.receive();
    if (buffered() != 2 * each) ++bad;
    const std::byte* in_place = second.bytes().data();
    iso::message third = node.receive();
    // The second moved out of the queue: another address, the same bytes, credits back.
    if (second.bytes().data() == in_place) ++bad;
    if (!same(second.bytes(), pattern(kSize, 1)) || !same(third.bytes(), pattern(kSize, 2))) {
      ++bad;
    }
    if (buffered() != each) ++bad;
    node.barrier();
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(bad.load(), 0);
}

// Plain messages held in the NIC's receive queue (one received and kept, one not yet
// received) must not keep the queue full: more than the whole queue of isotach traffic
// flows past them, and both arrive intact.
TEST(RunInproc, HeldMessagesNeverStallTheReceiveQueue) {
  as_inproc_job(2);
  std::atomic<int> bad{0};
  int status = iso::run(0, nullptr, [&](iso::node& node) {
    constexpr std::size_t kSize = 4096;
    constexpr int kIsotach = 3 * 1024;  // 12 MiB: more than the 8 MiB queue
    const std::vector<std::byte> payload = pattern(kSize, 9);
    if (node.id() == 1) {
      node.send(0, pattern(100, 1));
      node.send(0, pattern(100, 2));
      for (int i = 0; i < kIsotach; ++i) {
        iso::isochron iso(node);
        iso.send(0, payload);
      }
      node.barrier();
      return;
    }
    iso::message kept = node.receive();
    for (int i = 0; i < kIsotach; ++i) {
      const iso::notice n = node.iso_receive();
      if (!same(n.bytes, payload)) ++bad;
    }
    if (!same(kept.bytes(), pattern(100, 1))) ++bad;
    if (!same(node.receive().bytes(), pattern(100, 2))) ++bad;
    node.barrier();
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(bad.load(), 0);
}

TEST(RunInproc, OneFailingNodeFailsTheJobAndReleasesTheOthers) {
  iso::test::allow_log_lines_in_this_test();
  as_inproc_job(2);
  iso::options opts;
  opts.barrier_timeout = std::chrono::seconds(30);
  const auto start = std::chrono::steady_clock::now();
  int status = iso::run(0, nullptr, opts, [](iso::node& node) {
    if (node.id() == 1) throw std::runtime_error("deliberate failure");
    node.barrier();  // would wait forever for node 1 if the failure were not propagated
  });
  EXPECT_EQ(status, 1);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(RunInproc, SendToAnUnknownNodeIsAClearError) {
  as_inproc_job(2);
  std::atomic<int> caught{0};
  int status = iso::run(0, nullptr, [&](iso::node& node) {
    const std::byte b{1};
    try {
      node.send(7, std::span(&b, 1));
    } catch (const iso::error& e) {
      if (e.code() == iso::error_code::invalid_argument &&
          std::string(e.what()).find("node 7") != std::string::npos) {
        ++caught;
      }
    }
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(caught.load(), 2);
}

// Messages larger than the transport carries in one packet travel as fragments and arrive
// whole; the largest allowed size works to a peer and to oneself, one byte more is refused.
TEST(RunInproc, TheLargestMessageArrivesWhole) {
  as_inproc_job(2);
  std::atomic<int> good{0};
  std::atomic<int> refused{0};
  int status = iso::run(0, nullptr, [&](iso::node& node) {
    EXPECT_GE(node.max_message_size(), std::size_t{1} << 20) << "the documented minimum";
    std::vector<std::byte> big(node.max_message_size());
    for (std::size_t i = 0; i < big.size(); ++i) {
      big[i] = std::byte(static_cast<std::uint8_t>(i * 31 + node.id()));
    }
    node.send(1 - node.id(), big);
    node.send(node.id(), big);
    for (int k = 0; k < 2; ++k) {
      iso::message m = node.receive();
      const std::size_t n = m.bytes().size();
      bool intact = n == big.size();
      for (std::size_t i = 0; intact && i < n; ++i) {
        intact = m.bytes()[i] == std::byte(static_cast<std::uint8_t>(i * 31 + m.source()));
      }
      if (intact) ++good;
    }
    big.push_back(std::byte{0});
    try {
      node.send(1 - node.id(), big);
    } catch (const iso::error& e) {
      if (e.code() == iso::error_code::out_of_range) ++refused;
    }
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(good.load(), 4);
  EXPECT_EQ(refused.load(), 2);
}

TEST(RunInproc, PageSizeThatIsNotAPowerOfTwoIsReported) {
  as_inproc_job(2);
  iso::options opts;
  opts.page_variables = 100;
  testing::internal::CaptureStderr();
  int status = iso::run(0, nullptr, opts, [](iso::node&) {});
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(status, 1);
  EXPECT_NE(err.find("page_variables is 100"), std::string::npos) << err;
}

TEST(RunInproc, BadSettingIsReportedNotCrashed) {
  as_inproc_job(2);
  ::setenv("ISO_RING_CAPACITY", "12345", 1);
  testing::internal::CaptureStderr();
  int status = iso::run(0, nullptr, [](iso::node&) {});
  const std::string err = testing::internal::GetCapturedStderr();
  ::unsetenv("ISO_RING_CAPACITY");
  EXPECT_EQ(status, 1);
  EXPECT_NE(err.find("ISO_RING_CAPACITY"), std::string::npos) << err;
  EXPECT_NE(err.find("12345"), std::string::npos) << err;
}

}  // namespace
