// The paranoid executed-pulse check: echoes that match the marker pass, and any other echo
// is a DataLoss error naming the isochron, the node and both pulses.
#include "runtime/smm/echo_checker.hpp"

#include <gtest/gtest.h>

namespace {

TEST(EchoChecker, MatchingEchoesPassAndCompleteTheIsochron) {
  iso::runtime::echo_checker echoes(0);
  echoes.expect(7, 2);
  echoes.marker(7, 40);
  EXPECT_TRUE(echoes.check(1, 7, 40).ok());
  EXPECT_EQ(echoes.outstanding(), 1u);
  EXPECT_TRUE(echoes.check(2, 7, 40).ok());
  EXPECT_EQ(echoes.outstanding(), 0u);
  // A third echo for a completed isochron is a violation too.
  EXPECT_EQ(echoes.check(2, 7, 40).code(), absl::StatusCode::kDataLoss);
}

TEST(EchoChecker, AnotherPulseNamesBoth) {
  iso::runtime::echo_checker echoes(3);
  echoes.expect(12, 1);
  echoes.marker(12, 40);
  const absl::Status s = echoes.check(1, 12, 41);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(s.message(),
            "paranoid check: node 1 executed isochron 12 of node 3 at pulse 41, but the "
            "isochron marker said pulse 40");
}

TEST(EchoChecker, EchoBeforeTheMarkerIsAViolation) {
  iso::runtime::echo_checker echoes(0);
  echoes.expect(1, 1);
  const absl::Status s = echoes.check(1, 1, 5);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("its marker has not come yet"), std::string::npos) << s;
}

}  // namespace
