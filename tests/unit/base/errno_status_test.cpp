// errno_status: the canonical code follows errno, and the message is "<what>: <strerror>".
#include "base/errno_status.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace {

TEST(ErrnoStatus, CodeFollowsErrno) {
  EXPECT_EQ(iso::base::errno_status("open", ENOENT).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(iso::base::errno_status("open", EACCES).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(iso::base::errno_status("send", EAGAIN).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(iso::base::errno_status("mmap", ENOMEM).code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(iso::base::errno_status("poll", EINVAL).code(), absl::StatusCode::kInvalidArgument);
}

TEST(ErrnoStatus, MessageNamesWhatWasDoneAndStrerror) {
  const absl::Status s = iso::base::errno_status("resize job segment", ENOSPC);
  EXPECT_EQ(s.message(), std::string("resize job segment: ") + std::strerror(ENOSPC));
}

TEST(ErrnoStatus, ReadsErrnoOfTheFailedCall) {
  ASSERT_EQ(::open("/nonexistent/iso-errno-status-test", O_RDONLY), -1);
  const absl::Status s = iso::base::errno_status("open the job file");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), std::string("open the job file: ") + std::strerror(ENOENT));
}

}  // namespace
