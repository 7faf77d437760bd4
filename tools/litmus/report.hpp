// What iso-litmus prints: a test with its SC outcomes, the table of one test's runs, and a
// summary of all tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/litmus/litmus_test.hpp"
#include "tools/litmus/runner.hpp"

namespace iso::litmus {

// The test as the parser understood it, and every outcome SC allows.
std::string show_test(const test& t);

// One test's table: outcome, count, allowed under SC, verdict; then the exists line, the
// history checker's counts and the test's verdict ("OK" or "FORBIDDEN OUTCOME OBSERVED").
// `relaxed`: the job ran with options::relaxed (said loudly in the header and verdict).
std::string format_table(const test& t, const test_result& r, std::uint32_t nodes, bool relaxed);

struct summary_row {
  std::string name;
  std::uint64_t runs = 0;
  std::uint64_t forbidden = 0;
  std::uint64_t history_violations = 0;
  bool exists_allowed = false;  // whether SC allows the exists condition
  std::uint64_t exists_observed = 0;
};
summary_row summarize(const test& t, const test_result& r);

// --compare: one test run under isotach and under relaxed mode (the same placements and
// delays), in one table: outcome, allowed under SC, the count in each mode, a verdict.
std::string format_comparison(const test& t, const test_result& isotach, const test_result& relaxed,
                              std::uint32_t nodes);

struct comparison_row {
  summary_row isotach;
  summary_row relaxed;
};
std::string format_comparison_summary(const std::vector<comparison_row>& rows, std::uint32_t nodes);
// Whether a test's isotach runs show a bug of the runtime: an outcome SC forbids, a history
// with a cycle, or one the checker could not judge.
bool isotach_failed(const test_result& r);
std::string format_summary(const std::vector<summary_row>& rows, std::uint32_t nodes, bool relaxed);

}  // namespace iso::litmus
