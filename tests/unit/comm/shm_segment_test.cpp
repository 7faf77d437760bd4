// The job segment: join protocol, membership check, barrier and boards, exercised by
// threads of one process sharing a descriptor (the multi-process path is in tests/multiproc).
#include "comm/shm_segment.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <thread>

namespace iso::comm {
namespace {

int fresh_fd() {
  const int fd = ::memfd_create("iso-test", MFD_CLOEXEC);
  EXPECT_GE(fd, 0);
  return fd;
}

TEST(ShmSegment, NodesJoinThroughOneDescriptorAndMeetAtBarriers) {
  constexpr std::uint32_t kNodes = 3;
  const int fd = fresh_fd();
  std::vector<std::shared_ptr<shm_segment>> joined(kNodes);
  std::vector<std::thread> threads;
  for (std::uint32_t rank = 0; rank < kNodes; ++rank) {
    threads.emplace_back([&, rank] {
      auto segment = shm_segment::join(::dup(fd), rank, kNodes, "s3cret", {});
      ASSERT_TRUE(segment.ok()) << segment.status();
      joined[rank] = *segment;
      std::memcpy(joined[rank]->board(rank).data(), &rank, sizeof(rank));
      ASSERT_TRUE(joined[rank]->barrier(absl::Seconds(20)).ok());
      for (std::uint32_t peer = 0; peer < kNodes; ++peer) {
        std::uint32_t seen;
        std::memcpy(&seen, joined[rank]->board(peer).data(), sizeof(seen));
        EXPECT_EQ(seen, peer);
      }
      ASSERT_TRUE(joined[rank]->barrier(absl::Seconds(20)).ok());
    });
  }
  for (auto& t : threads) t.join();
  ::close(fd);
}

TEST(ShmSegment, WrongSecretIsRefused) {
  const int fd = fresh_fd();
  auto first = shm_segment::join(::dup(fd), 0, 2, "right", {});
  ASSERT_TRUE(first.ok());
  auto second = shm_segment::join(::dup(fd), 1, 2, "wrong", {});
  EXPECT_TRUE(absl::IsPermissionDenied(second.status())) << second.status();
  ::close(fd);
}

TEST(ShmSegment, MissingNodeZeroTimesOut) {
  const int fd = fresh_fd();
  auto lonely = shm_segment::join(::dup(fd), 1, 2, "", {.join_timeout = absl::Milliseconds(200)});
  EXPECT_TRUE(absl::IsDeadlineExceeded(lonely.status())) << lonely.status();
  ::close(fd);
}

TEST(ShmSegment, BarrierTimesOutNamingHowManyArrived) {
  auto segment = shm_segment::create_private(2, "", {});
  ASSERT_TRUE(segment.ok());
  absl::Status s = (*segment)->barrier(absl::Milliseconds(200));
  EXPECT_TRUE(absl::IsDeadlineExceeded(s)) << s;
  EXPECT_NE(s.message().find("1 of 2"), std::string::npos) << s;
}

TEST(ShmSegment, FailedJobReleasesBarrierWaiters) {
  auto segment = shm_segment::create_private(2, "", {});
  ASSERT_TRUE(segment.ok());
  std::thread failing([&] { (*segment)->mark_failed(1); });
  absl::Status s = (*segment)->barrier(absl::Seconds(30));
  failing.join();
  EXPECT_TRUE(absl::IsAborted(s)) << s;
  EXPECT_NE(s.message().find("node 1"), std::string::npos) << s;
}

// Once a node has failed, no later barrier may pass on a stale arrival count.
TEST(ShmSegment, EveryBarrierAfterAFailureFails) {
  auto segment = shm_segment::create_private(2, "", {});
  ASSERT_TRUE(segment.ok());
  (void)(*segment)->barrier_arrive();  // a survivor arrives, then its peer dies
  (*segment)->mark_failed(1);
  for (int i = 0; i < 3; ++i) {
    const std::uint32_t ticket = (*segment)->barrier_arrive();
    EXPECT_TRUE(absl::IsAborted((*segment)->barrier_passed(ticket).status()));
    EXPECT_TRUE(absl::IsAborted((*segment)->barrier(absl::Seconds(5))));
  }
}

TEST(ShmSegment, RejectsBadShapes) {
  EXPECT_TRUE(absl::IsInvalidArgument(shm_segment::join(fresh_fd(), 3, 3, "", {}).status()));
  EXPECT_TRUE(
      absl::IsInvalidArgument(shm_segment::create_private(2, "", {.ring_capacity = 300}).status()));
}

}  // namespace
}  // namespace iso::comm
