// ISO_CHECK and ISO_DCHECK: a passing check costs nothing (its reason is never built), a
// failing one throws internal_error with the location, the condition and the reason, or
// aborts when abort-on-internal-error is set.
#include "base/check.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "base/log.hpp"
#include "tests/support/test_support.hpp"

namespace {

using ::testing::HasSubstr;

// The tests' main() makes internal errors abort; these tests need them thrown.
class throwing_internal_errors {
 public:
  throwing_internal_errors() { iso::base::set_abort_on_internal_error(false); }
  ~throwing_internal_errors() { iso::base::set_abort_on_internal_error(true); }
  throwing_internal_errors(const throwing_internal_errors&) = delete;
  throwing_internal_errors& operator=(const throwing_internal_errors&) = delete;
};

// The message of the internal_error `check` throws; fails the test if it throws nothing.
template <typename Check>
std::string thrown_by(Check&& check) {
  const throwing_internal_errors throwing;
  try {
    check();
  } catch (const iso::base::internal_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "the check did not throw";
  return "";
}

TEST(Check, PassingCheckDoesNotBuildItsReason) {
  int reasons_built = 0;
  auto reason = [&] { return ++reasons_built; };
  ISO_CHECK(1 + 1 == 2) << "arithmetic broke: " << reason();
  EXPECT_EQ(reasons_built, 0);
}

TEST(Check, FailingCheckThrowsWithLocationConditionAndReason) {
  iso::test::allow_log_lines_in_this_test();
  const int head = 7;
  const int tail = 3;
  const std::string what = thrown_by(
      [&] { ISO_CHECK(head <= tail) << "ring head " << head << " passed tail " << tail; });
  EXPECT_THAT(what, HasSubstr("check_test.cpp:"));
  EXPECT_THAT(what, HasSubstr("check failed: head <= tail: ring head 7 passed tail 3"));
}

TEST(Check, FailingCheckIsLoggedAsAnError) {
  iso::test::allow_log_lines_in_this_test();
  const int errors = iso::base::log_error_count();
  (void)thrown_by([] { ISO_CHECK(false) << "logged"; });
  EXPECT_EQ(iso::base::log_error_count(), errors + 1);
}

TEST(Check, ComposesWithAnUnbracedIfElse) {
  iso::test::allow_log_lines_in_this_test();
  // The macro's own `else` must not capture the caller's.
  bool else_taken = false;
  const bool outer = false;
  if (outer)
    ISO_CHECK(false) << "never evaluated";
  else
    else_taken = true;
  EXPECT_TRUE(else_taken);
}

TEST(Check, OnInternalErrorThrowsTheMessage) {
  iso::test::allow_log_lines_in_this_test();
  const std::string what = thrown_by([] { iso::base::on_internal_error("queue 3 lost a record"); });
  EXPECT_EQ(what, "queue 3 lost a record");
}

TEST(CheckDeathTest, FailingCheckAbortsWhenAbortIsSet) {
  // main() sets abort-on-internal-error; the reason reaches the log before the abort.
  EXPECT_DEATH(ISO_CHECK(2 < 1) << "reason " << 42, "check failed: 2 < 1: reason 42");
}

TEST(Check, DebugCheckFollowsNdebug) {
  iso::test::allow_log_lines_in_this_test();
  int conditions_evaluated = 0;
  [[maybe_unused]] auto condition = [&] {
    ++conditions_evaluated;
    return false;
  };
#ifdef NDEBUG
  ISO_DCHECK(condition()) << "compiled out";
  EXPECT_EQ(conditions_evaluated, 0);
#else
  const std::string what = thrown_by([&] { ISO_DCHECK(condition()) << "debug only"; });
  EXPECT_EQ(conditions_evaluated, 1);
  EXPECT_THAT(what, HasSubstr("check failed: condition(): debug only"));
#endif
}

}  // namespace
