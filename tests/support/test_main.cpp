// main() for every test: GoogleTest, plus the project's rules for tests. A broken internal
// invariant aborts (so it cannot be caught and ignored), and a test that logs an error or a
// warning it did not expect fails.
#include <gtest/gtest.h>

#include "base/check.hpp"
#include "base/log.hpp"
#include "tests/support/test_support.hpp"

namespace {

class fail_on_unexpected_log : public testing::EmptyTestEventListener {
  void OnTestStart(const testing::TestInfo&) override {
    errors_ = iso::base::log_error_count();
    warnings_ = iso::base::log_warning_count();
  }
  void OnTestEnd(const testing::TestInfo& info) override {
    if (iso::test::expected_log_lines_allowed()) return;
    const int errors = iso::base::log_error_count() - errors_;
    const int warnings = iso::base::log_warning_count() - warnings_;
    EXPECT_EQ(errors + warnings, 0)
        << info.name() << " logged " << errors << " errors and " << warnings << " warnings";
  }
  int errors_ = 0;
  int warnings_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  iso::base::set_abort_on_internal_error(true);
  testing::UnitTest::GetInstance()->listeners().Append(new fail_on_unexpected_log);
  return RUN_ALL_TESTS();
}
