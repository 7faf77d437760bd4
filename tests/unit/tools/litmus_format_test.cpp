// iso-litmus's text format, catalogue and SC enumeration (tools/litmus/): the catalogue
// parses and every test's exists condition is one SC forbids; malformed files name their
// line and column; unknown names list the catalogue.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tools/litmus/catalogue.hpp"
#include "tools/litmus/litmus_test.hpp"
#include "tools/litmus/sc_outcomes.hpp"

namespace {

using iso::litmus::parse;

const char* const kSb = R"(ISO SB
"store buffering"
(* a comment *)
{ x = 0; y = 0; }
 P0      | P1      ;
 x = 1   | y = 1   ;
 r0 = y  | r0 = x  ;
exists (0:r0=0 /\ 1:r0=0)
)";

std::string error_of(const std::string& text) {
  const auto r = parse(text, "t.litmus");
  EXPECT_FALSE(r.parsed) << "parsed: " << text;
  return r.error.to_string();
}

TEST(LitmusFormat, ParsesAStoreBufferingTest) {
  const auto r = parse(kSb, "sb.litmus");
  ASSERT_TRUE(r.parsed) << r.error.to_string();
  const iso::litmus::test& t = *r.parsed;
  EXPECT_EQ(t.name, "SB");
  EXPECT_EQ(t.description, "store buffering");
  ASSERT_EQ(t.processes.size(), 2u);
  ASSERT_EQ(t.processes[0].isochrons.size(), 2u);
  EXPECT_TRUE(t.processes[0].isochrons[0][0].write);
  EXPECT_EQ(t.processes[0].isochrons[1][0].reg, "r0");
  EXPECT_EQ(t.processes[0].isochrons[1][0].location, "y");
  EXPECT_EQ(t.locations, (std::vector<std::string>{"x", "y"}));
  ASSERT_EQ(t.exists.size(), 2u);
  EXPECT_EQ(*t.exists[1].process, 1u);
}

TEST(LitmusFormat, ScAllowsThreeOutcomesOfStoreBufferingButNotBothZero) {
  const auto t = *parse(kSb, "sb.litmus").parsed;
  const auto allowed = iso::litmus::sc_outcomes(t);
  std::vector<std::string> text;
  text.reserve(allowed.size());
  for (const auto& o : allowed) text.push_back(iso::litmus::format_outcome(t, o));
  EXPECT_EQ(text, (std::vector<std::string>{"0:r0=0 1:r0=1", "0:r0=1 1:r0=0", "0:r0=1 1:r0=1"}));
  for (const auto& o : allowed) EXPECT_FALSE(iso::litmus::satisfies(t, o));
}

TEST(LitmusFormat, GroupedAccessesAreOneIsochronAndCanBeObservedTogether) {
  // In one isochron both reads of MP see the same moment: no mixed outcome at all.
  const auto r = parse(R"(ISO MPg
 P0           | P1             ;
 x = 1, y = 1 | r0 = y, r1 = x ;
exists (1:r0=1 /\ 1:r1=0))",
                       "g.litmus");
  ASSERT_TRUE(r.parsed) << r.error.to_string();
  EXPECT_EQ(r.parsed->processes[0].isochrons.size(), 1u);
  EXPECT_EQ(iso::litmus::sc_outcomes(*r.parsed).size(), 2u);
}

TEST(LitmusFormat, InitialValuesAndFinalValues) {
  const auto r = parse(R"(ISO I
{ x = 5 }
 P0    ;
 x = 6 ;
 r0 = x ;
exists (0:r0=6 /\ x=6))",
                       "i.litmus");
  ASSERT_TRUE(r.parsed) << r.error.to_string();
  const auto allowed = iso::litmus::sc_outcomes(*r.parsed);
  ASSERT_EQ(allowed.size(), 1u);
  EXPECT_TRUE(iso::litmus::satisfies(*r.parsed, *allowed.begin()));
}

TEST(LitmusFormat, MalformedFilesNameLineAndColumn) {
  EXPECT_EQ(error_of("SB\n"), "t.litmus:1:1: a litmus file starts with 'ISO <name>', found 'SB'");
  EXPECT_EQ(error_of("ISO A\n P0 | P2 ;\n"), "t.litmus:2:7: expected process P1, found 'P2'");
  EXPECT_EQ(error_of("ISO A\n P0 | P1 ;\n x = 1 ;\nexists (x=1)"),
            "t.litmus:3:2: this row has 1 cells; the test has 2 processes");
  EXPECT_EQ(error_of("ISO A\n P0 ;\n x = 1 | y = 1 ;\nexists (x=1)"),
            "t.litmus:3:10: this row has more cells than the 1 processes, found 'y'");
  EXPECT_EQ(error_of("ISO A\n P0 ;\n x = 1 \nexists (x=1)"),
            "t.litmus:4:1: expected '|' between cells or ';' at the end of the row, found "
            "'exists'");
  EXPECT_EQ(error_of("ISO A\n P0 ;\n x = 1, x = 1 ;\nexists (x=1)"),
            "t.litmus:3:13: the value 1 is written to x twice; values written to a location "
            "must be unique");
  EXPECT_EQ(error_of("ISO A\n P0 ;\n x = 0 ;\nexists (x=1)"),
            "t.litmus:3:6: writes must not store 0 (the value of fresh memory): x = 0");
  EXPECT_EQ(error_of("ISO A\n P0 ;\n y = x ;\nexists (x=1)"),
            "t.litmus:3:2: 'y = <location>': the left side of a read must be a register (r0, "
            "r1, ...)");
  EXPECT_EQ(error_of("ISO A\n P0 ;\n r0 = x ;\nexists (1:r0=1)"),
            "t.litmus:4:9: there is no process P1");
  EXPECT_EQ(error_of("ISO A\n P0 ;\n r0 = x ;\nexists (0:r1=1)"),
            "t.litmus:4:11: P0 has no register 'r1'");
  EXPECT_EQ(error_of("ISO A\n P0 ;\n r0 = x ;\nexists (0:r0=0) extra"),
            "t.litmus:4:17: expected the end of the file after the condition, found 'extra'");
  EXPECT_EQ(error_of("ISO A\n P0 ;\n r0 = x $ ;"), "t.litmus:3:9: unexpected character '$'");
  EXPECT_EQ(error_of("ISO A (* open"), "t.litmus:1:7: unterminated comment");
  EXPECT_EQ(error_of("ISO A\n{ z = 1 }\n P0 ;\n r0 = x ;\nexists (0:r0=0)"),
            "t.litmus:2:3: location z is initialised but never used");
}

TEST(LitmusCatalogue, EveryTestParsesAndItsConditionIsForbiddenUnderSc) {
  const iso::litmus::catalogue cat(LITMUS_CATALOGUE);
  const auto names = cat.names();
  for (const char* want : {"SB", "MP", "LB", "IRIW", "2+2W", "WRC", "ISA2", "R", "S", "RWC", "CoRR",
                           "CoWW", "CoRW", "CoWR", "3.SB"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
    EXPECT_NE(std::find(names.begin(), names.end(), std::string(want) + "+iso"), names.end())
        << want;
  }
  std::vector<iso::litmus::test> tests;
  std::string error;
  ASSERT_TRUE(cat.load("all", tests, error)) << error;
  ASSERT_EQ(tests.size(), names.size());
  for (const auto& t : tests) {
    const auto allowed = iso::litmus::sc_outcomes(t);
    EXPECT_FALSE(allowed.empty()) << t.name;
    for (const auto& o : allowed) {
      EXPECT_FALSE(iso::litmus::satisfies(t, o))
          << t.name << ": SC allows " << iso::litmus::format_outcome(t, o);
    }
  }
}

TEST(LitmusCatalogue, UnknownNamesListTheCatalogue) {
  const iso::litmus::catalogue cat(LITMUS_CATALOGUE);
  std::vector<iso::litmus::test> tests;
  std::string error;
  EXPECT_FALSE(cat.load("NOPE", tests, error));
  EXPECT_NE(error.find("unknown test 'NOPE'; the catalogue has 2+2W"), std::string::npos) << error;
  EXPECT_FALSE(cat.load("missing/file.litmus", tests, error));
  EXPECT_EQ(error, "missing/file.litmus:0:0: cannot read the file");
  const iso::litmus::catalogue empty("/nonexistent-folder");
  EXPECT_FALSE(empty.load("SB", tests, error));
  EXPECT_NE(error.find("holds no .litmus files"), std::string::npos) << error;
  EXPECT_TRUE(tests.empty());
}

}  // namespace
