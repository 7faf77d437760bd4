#include "tests/support/test_support.hpp"

#include <gtest/gtest.h>

#include <string>

namespace iso::test {
namespace {
std::string g_allowed_test;
}

void allow_log_lines_in_this_test() {
  g_allowed_test = testing::UnitTest::GetInstance()->current_test_info()->name();
}

bool expected_log_lines_allowed() {
  const auto* info = testing::UnitTest::GetInstance()->current_test_info();
  return info != nullptr && g_allowed_test == info->name();
}

}  // namespace iso::test
