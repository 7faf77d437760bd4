// ISO_RETURN_IF_ERROR and ISO_ASSIGN_OR_RETURN: an error returns at once, unchanged; OK goes
// on; the expression is evaluated exactly once.
#include "base/status_macros.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace {

absl::Status step(std::vector<std::string>& trace, const std::string& name, absl::Status result) {
  trace.push_back(name);
  return result;
}

absl::Status three_steps(std::vector<std::string>& trace, const absl::Status& second) {
  ISO_RETURN_IF_ERROR(step(trace, "first", absl::OkStatus()));
  ISO_RETURN_IF_ERROR(step(trace, "second", second));
  ISO_RETURN_IF_ERROR(step(trace, "third", absl::OkStatus()));
  return absl::OkStatus();
}

TEST(StatusMacros, ReturnIfErrorGoesOnWhenOk) {
  std::vector<std::string> trace;
  EXPECT_TRUE(three_steps(trace, absl::OkStatus()).ok());
  EXPECT_EQ(trace, (std::vector<std::string>{"first", "second", "third"}));
}

TEST(StatusMacros, ReturnIfErrorReturnsTheErrorUnchangedAndStops) {
  std::vector<std::string> trace;
  const absl::Status s = three_steps(trace, absl::NotFoundError("no page 9"));
  EXPECT_EQ(s, absl::NotFoundError("no page 9"));
  EXPECT_EQ(trace, (std::vector<std::string>{"first", "second"}));
}

absl::StatusOr<std::unique_ptr<int>> make(int value, int& calls) {
  ++calls;
  if (value < 0) return absl::OutOfRangeError("negative value " + std::to_string(value));
  return std::make_unique<int>(value);
}

// Two uses in one function (distinct temporaries), a declaration and an assignment, and a
// move-only value.
absl::StatusOr<int> sum_of(int a, int b, int& calls) {
  ISO_ASSIGN_OR_RETURN(std::unique_ptr<int> first, make(a, calls));
  std::unique_ptr<int> second;
  ISO_ASSIGN_OR_RETURN(second, make(b, calls));
  return *first + *second;
}

TEST(StatusMacros, AssignOrReturnAssignsOnOk) {
  int calls = 0;
  const absl::StatusOr<int> sum = sum_of(2, 40, calls);
  ASSERT_TRUE(sum.ok()) << sum.status();
  EXPECT_EQ(*sum, 42);
  EXPECT_EQ(calls, 2);
}

TEST(StatusMacros, AssignOrReturnReturnsTheErrorAndStops) {
  int calls = 0;
  EXPECT_EQ(sum_of(-1, 40, calls).status(), absl::OutOfRangeError("negative value -1"));
  EXPECT_EQ(calls, 1);
  calls = 0;
  EXPECT_EQ(sum_of(1, -4, calls).status(), absl::OutOfRangeError("negative value -4"));
  EXPECT_EQ(calls, 2);
}

}  // namespace
