// Run by isorun as 4 processes: the shm transport between real processes keeps every
// ordered pair FIFO and lossless under all-to-all load with small (back-pressured) rings,
// and carries packets of every size up to the maximum intact.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "base/check.hpp"
#include "comm/shm_segment.hpp"
#include "runtime/bootstrap/launch_environment.hpp"

namespace iso::comm {
namespace {

struct job {
  std::shared_ptr<shm_segment> segment;
  std::unique_ptr<transport> port;
  std::uint32_t rank = 0;
  // At exit, after the last test's barrier: isorun counts a node that ends without having
  // left the job as failed, which fails that barrier for a peer still waiting in it.
  job() = default;
  job(job&&) = default;
  job& operator=(job&&) = default;
  job(const job&) = delete;
  job& operator=(const job&) = delete;
  ~job() {
    if (segment) segment->mark_left(rank);
  }
};

// The job is joined once per process; every test uses it (join takes the descriptor).
job& the_job() {
  static job j = [] {
    job made;
    auto env = runtime::read_launch_environment();
    ISO_CHECK(env.ok() && env->shm_fd.has_value()) << "run this test through isorun";
    auto segment = shm_segment::join(*env->shm_fd, *env->rank, env->size, env->secret,
                                     {.ring_capacity = 4096, .shuffle_poll_order = true});
    ISO_CHECK(segment.ok()) << segment.status();
    made.segment = *segment;
    made.rank = *env->rank;
    made.port = make_shm_transport(made.segment, made.rank);
    return made;
  }();
  return j;
}

void poll_all(transport& t, const std::function<void(received_packet&)>& on_packet) {
  std::size_t handled = 0;
  ASSERT_TRUE(t.poll(on_packet, handled).ok());
}

TEST(ShmTransport, AllToAllBetweenProcessesIsFifoAndLossless) {
  job& j = the_job();
  transport& t = *j.port;
  const std::uint32_t n = t.size();
  constexpr std::uint32_t kPerPair = 50000;
  std::vector<std::uint32_t> next(n, 0);
  std::uint64_t received = 0;
  bool in_order = true;
  auto on_packet = [&](received_packet& p) {
    std::uint32_t stamp[2];
    std::memcpy(stamp, p.bytes().data(), sizeof(stamp));
    in_order = in_order && stamp[0] == p.source() && stamp[1] == next[p.source()];
    ++next[p.source()];
    ++received;
  };
  ASSERT_TRUE(j.segment->barrier(absl::Seconds(30)).ok());
  for (std::uint32_t seq = 0; seq < kPerPair; ++seq) {
    for (std::uint32_t to = 0; to < n; ++to) {
      const std::uint32_t stamp[2] = {j.rank, seq};
      for (;;) {
        absl::Status s = t.send(to, std::as_bytes(std::span(stamp)));
        if (s.ok()) break;
        ASSERT_TRUE(absl::IsUnavailable(s)) << s;
        poll_all(t, on_packet);
      }
    }
  }
  while (received < std::uint64_t{kPerPair} * n) {
    poll_all(t, on_packet);
    t.wait(absl::Milliseconds(10));
  }
  EXPECT_TRUE(in_order);
  for (std::uint32_t from = 0; from < n; ++from) EXPECT_EQ(next[from], kPerPair) << from;
  EXPECT_GT(t.counters().sends_would_block, 0u) << "4 KiB rings must have pushed back";
  ASSERT_TRUE(j.segment->barrier(absl::Seconds(30)).ok());
}

TEST(ShmTransport, EverySizeUpToTheMaximumCrossesIntact) {
  job& j = the_job();
  transport& t = *j.port;
  const std::size_t max = t.max_packet_size();
  const std::uint32_t to = (j.rank + 1) % t.size();
  const std::uint32_t from = (j.rank + t.size() - 1) % t.size();
  std::vector<std::byte> buffer(max);
  for (std::size_t i = 0; i < max; ++i) buffer[i] = std::byte(static_cast<std::uint8_t>(i * 13));
  std::size_t expected = 0;
  bool intact = true;
  auto on_packet = [&](received_packet& p) {
    intact = intact && p.source() == from && p.bytes().size() == expected &&
             std::memcmp(p.bytes().data(), buffer.data(), expected) == 0;
    ++expected;
  };
  ASSERT_TRUE(j.segment->barrier(absl::Seconds(30)).ok());
  for (std::size_t size = 0; size <= max; ++size) {
    while (!t.send(to, byte_span(buffer.data(), size)).ok()) poll_all(t, on_packet);
  }
  while (expected <= max) {
    poll_all(t, on_packet);
    t.wait(absl::Milliseconds(10));
  }
  EXPECT_TRUE(intact);
  ASSERT_TRUE(j.segment->barrier(absl::Seconds(30)).ok());
}

}  // namespace
}  // namespace iso::comm
