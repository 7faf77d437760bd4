// iso-litmus's side-by-side table (--compare): every outcome SC allows and every outcome
// seen in either mode gets a row with both counts; a forbidden outcome seen only in relaxed
// mode is the relaxed mode's doing, one seen under isotach a violation; the summary and
// the exit decision look at the isotach runs only.
#include <gtest/gtest.h>

#include <string>

#include "tools/litmus/litmus_test.hpp"
#include "tools/litmus/report.hpp"
#include "tools/litmus/runner.hpp"
#include "tools/litmus/sc_outcomes.hpp"

namespace {

using iso::litmus::outcome;
using iso::litmus::test_result;

const char* const kSb = R"(ISO SB
"store buffering"
 P0      | P1      ;
 x = 1   | y = 1   ;
 r0 = y  | r0 = x  ;
exists (0:r0=0 /\ 1:r0=0)
)";

iso::litmus::test sb() {
  auto r = iso::litmus::parse(kSb, "sb.litmus");
  EXPECT_TRUE(r.parsed) << r.error.to_string();
  return *r.parsed;
}

outcome regs(std::int64_t a, std::int64_t b) { return {.registers = {{a}, {b}}, .finals = {}}; }

test_result result_of(const iso::litmus::test& t, std::uint64_t both_zero, std::uint64_t one_one) {
  test_result r;
  r.allowed = iso::litmus::sc_outcomes(t);
  r.counts[regs(1, 1)] = one_one;
  if (both_zero > 0) r.counts[regs(0, 0)] = both_zero;
  r.runs = both_zero + one_one;
  r.forbidden = both_zero;
  r.exists_observed = both_zero;
  r.histories_checked = r.runs;
  r.history_violations = both_zero;
  return r;
}

// The line of `table` that starts with `prefix` (after the two-character marker).
std::string row(const std::string& table, const std::string& prefix) {
  const std::size_t at = table.find(prefix);
  if (at == std::string::npos) return "(no row " + prefix + ")";
  const std::size_t begin = table.rfind('\n', at) + 1;
  return table.substr(begin, table.find('\n', at) - begin);
}

TEST(LitmusReport, ComparisonShowsBothCountsAndWhoseOutcomeItIs) {
  const iso::litmus::test t = sb();
  const test_result isotach = result_of(t, 0, 10);
  const test_result relaxed = result_of(t, 4, 6);
  const std::string table = iso::litmus::format_comparison(t, isotach, relaxed, 2);
  EXPECT_NE(table.find("10 runs in each mode, 2 processes on 2 nodes; isotach beside RELAXED MODE"),
            std::string::npos)
      << table;
  EXPECT_EQ(row(table, "0:r0=0 1:r0=0"),
            "* 0:r0=0 1:r0=0  FORBIDDEN        0        4  isotach ok; relaxed mode broke SC");
  EXPECT_EQ(row(table, "0:r0=1 1:r0=1"), "  0:r0=1 1:r0=1  allowed         10        6  ok");
  EXPECT_EQ(row(table, "0:r0=0 1:r0=1"), "  0:r0=0 1:r0=1  allowed          0        0  not seen");
  EXPECT_NE(table.find("verdict: isotach OK, no outcome that SC forbids; relaxed mode (NOT SC): 4 "
                       "runs with outcomes SC forbids"),
            std::string::npos)
      << table;
  EXPECT_FALSE(iso::litmus::isotach_failed(isotach));
  EXPECT_TRUE(iso::litmus::isotach_failed(relaxed));
}

TEST(LitmusReport, AForbiddenOutcomeUnderIsotachIsAViolation) {
  const iso::litmus::test t = sb();
  const test_result isotach = result_of(t, 1, 9);
  const test_result relaxed = result_of(t, 0, 10);
  const std::string table = iso::litmus::format_comparison(t, isotach, relaxed, 2);
  EXPECT_EQ(row(table, "0:r0=0 1:r0=0"),
            "* 0:r0=0 1:r0=0  FORBIDDEN        1        0  VIOLATION under isotach");
  EXPECT_NE(table.find("verdict: isotach FORBIDDEN OUTCOME OBSERVED"), std::string::npos) << table;
  const std::string summary = iso::litmus::format_comparison_summary(
      {{iso::litmus::summarize(t, isotach), iso::litmus::summarize(t, relaxed)}}, 2);
  EXPECT_NE(summary.find("  SB              10  forbidden             1             0          1"
                         "          0\n"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("isotach: FORBIDDEN OUTCOMES OBSERVED"), std::string::npos) << summary;
  EXPECT_NE(summary.find("relaxed mode: no outcome that SC forbids was seen"), std::string::npos);
}

}  // namespace
