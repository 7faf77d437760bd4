// Helpers shared by the tests.
#pragma once

namespace iso::test {

// A test that provokes error or warning log lines on purpose calls this first; otherwise any
// such line fails the test.
void allow_log_lines_in_this_test();
bool expected_log_lines_allowed();

}  // namespace iso::test
