// The job segment's ranks are joined once: a second claim of a rank, by a process (here a
// thread) that has the descriptor and the secret, is refused before it can touch anything,
// and the first failure is reported on the launcher's pipe before the job is marked failed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <string>

#include "comm/shm_segment.hpp"

namespace iso::comm {
namespace {

int fresh_fd() {
  const int fd = ::memfd_create("iso-test", MFD_CLOEXEC);
  EXPECT_GE(fd, 0);
  return fd;
}

TEST(ShmSegmentClaim, EachRankIsJoinedOnce) {
  const int fd = fresh_fd();
  auto zero = shm_segment::join(::dup(fd), 0, 2, "s", {});
  ASSERT_TRUE(zero.ok()) << zero.status();
  struct stat sized {};
  ASSERT_EQ(::fstat(fd, &sized), 0);

  // A second node 0 must not re-initialise (or even resize) the segment.
  auto zero_again = shm_segment::join(::dup(fd), 0, 2, "s", {.ring_capacity = 1 << 20});
  EXPECT_TRUE(absl::IsFailedPrecondition(zero_again.status())) << zero_again.status();
  EXPECT_NE(zero_again.status().message().find("node 0 of this job has already been joined"),
            std::string::npos)
      << zero_again.status();
  struct stat after {};
  ASSERT_EQ(::fstat(fd, &after), 0);
  EXPECT_EQ(after.st_size, sized.st_size);

  auto one = shm_segment::join(::dup(fd), 1, 2, "s", {});
  ASSERT_TRUE(one.ok()) << one.status();
  auto one_again = shm_segment::join(::dup(fd), 1, 2, "s", {});
  EXPECT_TRUE(absl::IsFailedPrecondition(one_again.status())) << one_again.status();

  // The rank stays claimed after its process has left: a node is joined once per job.
  one->reset();
  auto one_later = shm_segment::join(::dup(fd), 1, 2, "s", {});
  EXPECT_TRUE(absl::IsFailedPrecondition(one_later.status())) << one_later.status();
  ::close(fd);
}

TEST(ShmSegmentClaim, FirstFailureIsReportedOnThePipe) {
  const int fd = fresh_fd();
  std::array<int, 2> pipe_ends{};
  ASSERT_EQ(::pipe2(pipe_ends.data(), O_CLOEXEC | O_NONBLOCK), 0);
  auto zero = shm_segment::join(::dup(fd), 0, 2, "s", {.report_fd = ::dup(pipe_ends[1])});
  ASSERT_TRUE(zero.ok()) << zero.status();
  auto one = shm_segment::join(::dup(fd), 1, 2, "s", {.report_fd = ::dup(pipe_ends[1])});
  ASSERT_TRUE(one.ok()) << one.status();
  (*one)->mark_failed(1);
  (*zero)->mark_failed(0);  // a consequence, not a first failure: not reported
  std::array<char, 64> buffer{};
  const ssize_t n = ::read(pipe_ends[0], buffer.data(), buffer.size());
  EXPECT_EQ(std::string(buffer.data(), n > 0 ? static_cast<std::size_t>(n) : 0), "1\n");
  EXPECT_NE((*zero)->job_status().message().find("node 1"), std::string::npos);
  ::close(pipe_ends[0]);
  ::close(pipe_ends[1]);
  ::close(fd);
}

}  // namespace
}  // namespace iso::comm
