// The log of a process's fences: numbers, completion from another thread, and a failed fence
// that stays failed after later fences made the log forget it.
#include "runtime/bootstrap/fence_log.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace iso::runtime {
namespace {

constexpr int kSomeFailure = -25;

TEST(FenceLog, NumbersFencesAndSaysHowEachStands) {
  fence_log log;
  EXPECT_EQ(log.look_up(1).state, fence_log::fence_state::unknown);
  auto [first, first_record] = log.begin();
  auto [second, second_record] = log.begin();
  EXPECT_EQ(first, 1u);
  EXPECT_EQ(second, 2u);
  EXPECT_EQ(log.look_up(0).state, fence_log::fence_state::unknown);
  EXPECT_EQ(log.look_up(3).state, fence_log::fence_state::unknown);
  EXPECT_EQ(log.look_up(first).state, fence_log::fence_state::running);
  first_record->finish(fence_log::kSucceeded);
  second_record->finish(kSomeFailure);
  EXPECT_EQ(log.look_up(first).state, fence_log::fence_state::passed);
  const fence_log::outcome failed = log.look_up(second);
  EXPECT_EQ(failed.state, fence_log::fence_state::failed);
  EXPECT_EQ(failed.status, kSomeFailure);
}

TEST(FenceLog, AFailedFenceIsNeverReadAsPassedLater) {
  fence_log log;
  auto [failing, failing_record] = log.begin();
  failing_record->finish(kSomeFailure);
  // Later fences start and pass; the log drops the completed ones before the last.
  for (int i = 0; i < 10; ++i) {
    auto [number, record] = log.begin();
    record->finish(fence_log::kSucceeded);
    EXPECT_EQ(log.look_up(number).state, fence_log::fence_state::passed);
  }
  const fence_log::outcome outcome = log.look_up(failing);
  EXPECT_EQ(outcome.state, fence_log::fence_state::failed);
  EXPECT_EQ(outcome.status, kSomeFailure);
  EXPECT_EQ(log.look_up(failing + 1).state, fence_log::fence_state::passed);
}

TEST(FenceLog, ARunningFenceIsKeptWhileLaterOnesComeAndGo) {
  fence_log log;
  auto [slow, slow_record] = log.begin();
  for (int i = 0; i < 5; ++i) {
    auto [number, record] = log.begin();
    record->finish(fence_log::kSucceeded);
  }
  EXPECT_EQ(log.look_up(slow).state, fence_log::fence_state::running);
  std::thread launcher([record = slow_record] { record->finish(fence_log::kSucceeded); });
  launcher.join();
  EXPECT_EQ(log.look_up(slow).state, fence_log::fence_state::passed);
}

}  // namespace
}  // namespace iso::runtime
