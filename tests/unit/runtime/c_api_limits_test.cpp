// The classic C API's limits, in a job of one node (no launcher): a message above the
// largest is refused by iso_send_msg itself, to another node or to this one, and the
// isochron goes on.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "iso/iso.h"

namespace {

using ::testing::HasSubstr;

int g_delivered = 0;

TEST(CApiLimits, AMessageAboveTheLargestIsRefusedWhenItIsAdded) {
  ASSERT_EQ(iso_try_init(), ISO_SUCCESS) << iso_last_error();
  // A generic lambda converts to whatever handler type the header declares.
  (void)iso_set_handler(3, [](auto, auto, auto) { ++g_delivered; });
  const std::vector<char> huge(8 << 20);
  ASSERT_EQ(iso_start(), ISO_SUCCESS) << iso_last_error();
  EXPECT_EQ(iso_send_msg(0, 3, huge.data(), huge.size()), ISO_E_OUT_OF_RANGE);
  EXPECT_THAT(iso_last_error(), HasSubstr("iso_send_msg: message of 8388608 bytes"));
  EXPECT_EQ(iso_send_msg(0, 3, huge.data(), 16), ISO_SUCCESS) << iso_last_error();
  EXPECT_EQ(iso_end(), ISO_SUCCESS) << iso_last_error();
  EXPECT_EQ(iso_barrier(), ISO_SUCCESS) << iso_last_error();
  EXPECT_EQ(g_delivered, 1);
  EXPECT_EQ(iso_deinit(), ISO_SUCCESS) << iso_last_error();
}

}  // namespace
