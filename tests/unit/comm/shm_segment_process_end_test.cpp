// The launcher's note of a node's end (shm_segment::note_process_ended): a node that ended
// without leaving the job is marked failed for every other node to see; one that left, or
// never joined, is not; and a later end does not take the place of the first failure.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "comm/shm_segment.hpp"

namespace iso::comm {
namespace {

using process_end = shm_segment::process_end;

int fresh_fd() {
  const int fd = ::memfd_create("iso-test", MFD_CLOEXEC);
  EXPECT_GE(fd, 0);
  return fd;
}

TEST(ShmSegmentProcessEnd, ANodeThatDidNotLeaveIsMarkedFailedForTheOthers) {
  const int fd = fresh_fd();
  auto zero = shm_segment::join(::dup(fd), 0, 3, "s", {});
  ASSERT_TRUE(zero.ok()) << zero.status();
  auto one = shm_segment::join(::dup(fd), 1, 3, "s", {});
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_TRUE((*zero)->job_status().ok());

  absl::StatusOr<process_end> end = shm_segment::note_process_ended(fd, 1);
  ASSERT_TRUE(end.ok()) << end.status();
  EXPECT_EQ(*end, process_end::first_failure);
  const absl::Status seen = (*zero)->job_status();
  EXPECT_TRUE(absl::IsAborted(seen)) << seen;
  EXPECT_NE(seen.message().find("node 1 ended before leaving the job"), std::string::npos) << seen;

  // Node 0 ends too, after the job failed: the first failure stays node 1's.
  end = shm_segment::note_process_ended(fd, 0);
  ASSERT_TRUE(end.ok()) << end.status();
  EXPECT_EQ(*end, process_end::other_failure);
  EXPECT_NE((*one)->job_status().message().find("node 1 ended"), std::string::npos);
  ::close(fd);
}

TEST(ShmSegmentProcessEnd, ANodeThatLeftOrNeverJoinedIsNoFailure) {
  const int fd = fresh_fd();
  // Before node 0 set the segment up, nobody can have joined.
  absl::StatusOr<process_end> end = shm_segment::note_process_ended(fd, 1);
  ASSERT_TRUE(end.ok()) << end.status();
  EXPECT_EQ(*end, process_end::not_joined);

  auto zero = shm_segment::join(::dup(fd), 0, 3, "s", {});
  ASSERT_TRUE(zero.ok()) << zero.status();
  auto one = shm_segment::join(::dup(fd), 1, 3, "s", {});
  ASSERT_TRUE(one.ok()) << one.status();
  (*one)->mark_left(1);

  end = shm_segment::note_process_ended(fd, 1);
  ASSERT_TRUE(end.ok()) << end.status();
  EXPECT_EQ(*end, process_end::left);
  end = shm_segment::note_process_ended(fd, 2);  // a process that never joined as node 2
  ASSERT_TRUE(end.ok()) << end.status();
  EXPECT_EQ(*end, process_end::not_joined);
  EXPECT_TRUE((*zero)->job_status().ok()) << (*zero)->job_status();

  end = shm_segment::note_process_ended(fd, 3);
  EXPECT_TRUE(absl::IsInvalidArgument(end.status())) << end.status();
  EXPECT_NE(end.status().message().find("node 3 is not a node of this job of 3 nodes"),
            std::string::npos)
      << end.status();
  ::close(fd);
}

}  // namespace
}  // namespace iso::comm
