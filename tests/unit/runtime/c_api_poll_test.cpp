// The classic C API's iso_poll, in a job of one node (no launcher): `while (1) iso_poll();`
// is how a classic node waits, so each call looks at the job's health exactly once, whether
// or not it found anything to do.
#include <gtest/gtest.h>

#include <cstdint>

#include "absl/status/statusor.h"
#include "iso/iso.h"
#include "runtime/job.hpp"

namespace {

TEST(CApiPoll, EachCallLooksAtTheJobOnce) {
  ASSERT_EQ(iso_try_init(), ISO_SUCCESS) << iso_last_error();
  for (int i = 0; i < 10; ++i) ASSERT_EQ(iso_poll(), ISO_SUCCESS) << iso_last_error();
  const absl::StatusOr<std::uint64_t> before = iso::runtime::c_api_job_checks();
  ASSERT_TRUE(before.ok()) << before.status();
  constexpr int kPolls = 1000;
  for (int i = 0; i < kPolls; ++i) ASSERT_EQ(iso_poll(), ISO_SUCCESS) << iso_last_error();
  const absl::StatusOr<std::uint64_t> after = iso::runtime::c_api_job_checks();
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(*after - *before, std::uint64_t{kPolls});
  EXPECT_EQ(iso_deinit(), ISO_SUCCESS) << iso_last_error();
}

}  // namespace
