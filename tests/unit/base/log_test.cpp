// Logging: which lines print (errors, warnings and info always; debug and trace only for the
// components ISO_DEBUG selects, by whole dotted prefixes), what a line looks like, and the
// error and warning counts tests rely on.
#include "base/log.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <thread>

#include "tests/support/test_support.hpp"

namespace {

using iso::base::log_enabled;
using iso::base::log_level;

// ISO_DEBUG is read once per process, at the first debug-level question, so it is set
// before main() runs: every test here sees this selection.
const bool kDebugSelected = [] {
  ::setenv("ISO_DEBUG", "nicfw,runtime.smm,,", 1);
  return true;
}();

// Captures what the calling code writes to stderr (the log's only output).
class captured_stderr {
 public:
  captured_stderr() { testing::internal::CaptureStderr(); }
  ~captured_stderr() {
    if (!taken_) (void)testing::internal::GetCapturedStderr();
  }
  captured_stderr(const captured_stderr&) = delete;
  captured_stderr& operator=(const captured_stderr&) = delete;
  std::string take() {
    taken_ = true;
    return testing::internal::GetCapturedStderr();
  }

 private:
  bool taken_ = false;
};

TEST(Log, ErrorsWarningsAndInfoAreAlwaysEnabled) {
  ASSERT_TRUE(kDebugSelected);
  for (const char* component : {"comm", "runtime", "nicfw.siu", "x"}) {
    EXPECT_TRUE(log_enabled(component, log_level::error)) << component;
    EXPECT_TRUE(log_enabled(component, log_level::warn)) << component;
    EXPECT_TRUE(log_enabled(component, log_level::info)) << component;
  }
}

TEST(Log, DebugSelectsWholeDottedPrefixes) {
  EXPECT_TRUE(log_enabled("nicfw", log_level::debug));
  EXPECT_TRUE(log_enabled("nicfw.siu", log_level::debug));
  EXPECT_TRUE(log_enabled("nicfw.credit", log_level::trace));
  EXPECT_TRUE(log_enabled("runtime.smm", log_level::debug));
  EXPECT_TRUE(log_enabled("runtime.smm.pages", log_level::debug));
  // A prefix that is not a whole component, a parent of a selected one, and an unnamed one.
  EXPECT_FALSE(log_enabled("nicfwx", log_level::debug));
  EXPECT_FALSE(log_enabled("nic", log_level::debug));
  EXPECT_FALSE(log_enabled("runtime", log_level::debug));
  EXPECT_FALSE(log_enabled("runtime.smmx", log_level::debug));
  EXPECT_FALSE(log_enabled("comm", log_level::trace));
  // Empty entries in the list select nothing.
  EXPECT_FALSE(log_enabled("", log_level::debug));
}

TEST(Log, LineNamesLevelComponentAndMessage) {
  iso::test::allow_log_lines_in_this_test();
  captured_stderr err;
  iso::base::log_write("comm", log_level::warn, "ring from node 3 is full");
  iso::base::log_write("runtime", log_level::info, "node started");
  EXPECT_EQ(err.take(),
            "iso warn comm: ring from node 3 is full\niso info runtime: node started\n");
}

TEST(Log, LineNamesTheNodeOfItsThread) {
  captured_stderr err;
  iso::base::set_log_node(2);
  iso::base::log_write("runtime", log_level::info, "from node two");
  // The node is per thread (inproc nodes share a process): another thread shows none.
  std::thread other([] { iso::base::log_write("runtime", log_level::info, "from elsewhere"); });
  other.join();
  iso::base::set_log_node(-1);
  EXPECT_EQ(err.take(), "iso[2] info runtime: from node two\niso info runtime: from elsewhere\n");
}

TEST(Log, CountsErrorsAndWarningsButNotInfo) {
  iso::test::allow_log_lines_in_this_test();
  captured_stderr err;
  const int errors = iso::base::log_error_count();
  const int warnings = iso::base::log_warning_count();
  iso::base::log_write("comm", log_level::error, "e");
  iso::base::log_write("comm", log_level::warn, "w1");
  iso::base::log_write("comm", log_level::warn, "w2");
  iso::base::log_write("comm", log_level::info, "i");
  iso::base::log_write("comm", log_level::debug, "d");
  EXPECT_EQ(iso::base::log_error_count(), errors + 1);
  EXPECT_EQ(iso::base::log_warning_count(), warnings + 2);
}

TEST(Log, MacroFormatsSelectedDebugLines) {
  captured_stderr err;
  ISO_LOG(nicfw.siu, debug, "pulse %u closed", 4u);
  EXPECT_EQ(err.take(), "iso debug nicfw.siu: pulse 4 closed\n");
}

TEST(Log, UnselectedDebugLineFormatsNothing) {
  captured_stderr err;
  int formatted = 0;
  auto argument = [&] { return ++formatted; };
  ISO_LOG(comm.shm, debug, "never %d", argument());
  ISO_LOG(runtime, trace, "never %d", argument());
  EXPECT_EQ(formatted, 0);
  EXPECT_EQ(err.take(), "");
}

TEST(Log, MacroAlwaysPrintsInfo) {
  captured_stderr err;
  ISO_LOG(comm.shm, info, "segment %s mapped", "iso-1");
  EXPECT_EQ(err.take(), "iso info comm.shm: segment iso-1 mapped\n");
}

}  // namespace
