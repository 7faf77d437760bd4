// The isotach receive queue: messages in the order their pulses execute, signals coalesced
// per channel per batch, barriers completed in the batch of their last arrival (weak before
// the batch's messages, strong after them), one instance at a time per channel, and an
// InvalidArgument naming the node for every arrival that contradicts the others.
#include "runtime/smm/receive_queue.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace iso::runtime {
namespace {

using ::testing::ElementsAre;

std::vector<std::byte> text(const std::string& s) {
  std::vector<std::byte> out;
  for (char c : s) out.push_back(static_cast<std::byte>(c));
  return out;
}

std::string text_of(const std::vector<std::byte>& bytes) {
  std::string out;
  for (std::byte b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

// A notice in one line, for comparing whole queues.
std::string describe(const notice& n) {
  switch (n.what) {
    case notice::kind::message:
      return "message " + text_of(n.bytes) + " from " + std::to_string(n.source) + " at " +
             std::to_string(n.pulse);
    case notice::kind::signal:
      return "signal " + std::to_string(n.channel) + " x" + std::to_string(n.count) + " at " +
             std::to_string(n.pulse);
    case notice::kind::barrier:
      return std::string(n.mode == barrier_mode::weak ? "weak" : "strong") + " barrier " +
             std::to_string(n.instance) + " on " + std::to_string(n.channel) + " at " +
             std::to_string(n.pulse);
  }
  return "?";
}

std::vector<std::string> drain(receive_queue& q) {
  std::vector<std::string> out;
  while (!q.empty()) out.push_back(describe(q.pop()));
  return out;
}

TEST(ReceiveQueue, MessagesComeOutInOrderWithTheirPulseAndSource) {
  receive_queue q(2);
  EXPECT_TRUE(q.empty());
  q.begin_batch(4);
  q.message(1, text("ab"));
  q.message(0, text("cde"));
  q.end_batch();
  q.begin_batch(6);
  q.message(0, text("f"));
  q.end_batch();
  EXPECT_EQ(q.size(), 3u);
  EXPECT_EQ(q.payload_bytes(), 6u);
  EXPECT_EQ(q.front_payload_size(), 2u);
  const notice first = q.pop();
  EXPECT_EQ(first.what, notice::kind::message);
  EXPECT_EQ(q.payload_bytes(), 4u);
  EXPECT_EQ(q.front_payload_size(), 3u);
  EXPECT_EQ(describe(first), "message ab from 1 at 4");
  EXPECT_THAT(drain(q), ElementsAre("message cde from 0 at 4", "message f from 0 at 6"));
  EXPECT_EQ(q.payload_bytes(), 0u);
}

TEST(ReceiveQueue, EmptyMessageIsStillANotice) {
  receive_queue q(1);
  q.begin_batch(1);
  q.message(0, {});
  q.end_batch();
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q.front_payload_size(), 0u);
  const notice n = q.pop();
  EXPECT_EQ(n.what, notice::kind::message);
  EXPECT_TRUE(n.bytes.empty());
}

TEST(ReceiveQueue, ReusedPayloadBufferHoldsOnlyTheNewMessage) {
  receive_queue q(1);
  q.begin_batch(1);
  q.message(0, text("a long first message"));
  q.end_batch();
  EXPECT_EQ(text_of(q.pop().bytes), "a long first message");
  q.begin_batch(2);
  q.message(0, text("xy"));
  q.end_batch();
  EXPECT_EQ(q.front_payload_size(), 2u);
  EXPECT_EQ(text_of(q.pop().bytes), "xy");
}

TEST(ReceiveQueue, SignalsCoalescePerChannelAfterTheBatchsMessages) {
  receive_queue q(3);
  q.begin_batch(9);
  ASSERT_TRUE(q.signal(0, 5).ok());
  q.message(2, text("m"));
  ASSERT_TRUE(q.signal(1, 2).ok());
  ASSERT_TRUE(q.signal(2, 5).ok());
  ASSERT_TRUE(q.signal(2, 5).ok());
  // Nothing is filed until the batch ends.
  EXPECT_EQ(q.size(), 1u);
  q.end_batch();
  EXPECT_THAT(drain(q),
              ElementsAre("message m from 2 at 9", "signal 2 x1 at 9", "signal 5 x3 at 9"));
  // The next batch starts counting afresh.
  q.begin_batch(10);
  ASSERT_TRUE(q.signal(0, 5).ok());
  q.end_batch();
  EXPECT_THAT(drain(q), ElementsAre("signal 5 x1 at 10"));
}

TEST(ReceiveQueue, SignalOnAChannelThatDoesNotExistIsInvalidNamingTheNode) {
  receive_queue q(2);
  q.begin_batch(1);
  EXPECT_EQ(q.signal(1, kChannels),
            absl::InvalidArgumentError(
                "signal from node 1: channel 8 does not exist: channels are 0..7"));
  q.end_batch();
  EXPECT_TRUE(q.empty());
}

TEST(ReceiveQueue, BarrierInstancesAreNumberedAndOneRunsAtATime) {
  receive_queue q(2);
  EXPECT_EQ(q.next_barrier(3).value(), 0u);
  EXPECT_TRUE(q.barrier_complete(3));
  q.started_barrier(3);
  EXPECT_FALSE(q.barrier_complete(3));
  EXPECT_EQ(q.next_barrier(3).status(),
            absl::FailedPreconditionError(
                "barrier 0 on channel 3 has not completed here yet; wait for its notice before "
                "starting the next"));
  // Channels are independent.
  EXPECT_EQ(q.next_barrier(4).value(), 0u);
  q.begin_batch(7);
  ASSERT_TRUE(q.arrival(0, 3, barrier_mode::strong, 0).ok());
  ASSERT_TRUE(q.arrival(1, 3, barrier_mode::strong, 0).ok());
  q.end_batch();
  EXPECT_TRUE(q.barrier_complete(3));
  EXPECT_EQ(q.next_barrier(3).value(), 1u);
  EXPECT_THAT(drain(q), ElementsAre("strong barrier 0 on 3 at 7"));
}

TEST(ReceiveQueue, NextBarrierOnAChannelThatDoesNotExistIsInvalid) {
  receive_queue q(1);
  EXPECT_EQ(q.next_barrier(kChannels).status(),
            absl::InvalidArgumentError("channel 8 does not exist: channels are 0..7"));
}

TEST(ReceiveQueue, BarrierCompletesInTheBatchOfItsLastArrival) {
  receive_queue q(3);
  q.begin_batch(1);
  ASSERT_TRUE(q.arrival(2, 0, barrier_mode::strong, 0).ok());
  q.end_batch();
  q.begin_batch(2);
  ASSERT_TRUE(q.arrival(0, 0, barrier_mode::strong, 0).ok());
  q.end_batch();
  EXPECT_TRUE(q.empty());
  q.begin_batch(5);
  ASSERT_TRUE(q.arrival(1, 0, barrier_mode::strong, 0).ok());
  q.end_batch();
  EXPECT_THAT(drain(q), ElementsAre("strong barrier 0 on 0 at 5"));
}

TEST(ReceiveQueue, WeakBarrierGoesBeforeTheBatchsMessagesStrongAfter) {
  receive_queue q(2);
  // A message of an earlier batch stays ahead of everything in the later one.
  q.begin_batch(1);
  q.message(0, text("old"));
  q.end_batch();
  q.begin_batch(2);
  q.message(0, text("a"));
  ASSERT_TRUE(q.arrival(0, 1, barrier_mode::weak, 0).ok());
  ASSERT_TRUE(q.arrival(0, 2, barrier_mode::strong, 0).ok());
  ASSERT_TRUE(q.signal(0, 6).ok());
  q.message(1, text("b"));
  ASSERT_TRUE(q.arrival(1, 2, barrier_mode::strong, 0).ok());
  ASSERT_TRUE(q.arrival(1, 1, barrier_mode::weak, 0).ok());
  q.message(1, text("c"));
  q.end_batch();
  EXPECT_THAT(drain(q),
              ElementsAre("message old from 0 at 1", "weak barrier 0 on 1 at 2",
                          "message a from 0 at 2", "message b from 1 at 2", "message c from 1 at 2",
                          "signal 6 x1 at 2", "strong barrier 0 on 2 at 2"));
}

TEST(ReceiveQueue, BarrierOfOneNodeCompletesOnItsOwnArrival) {
  receive_queue q(1);
  q.started_barrier(0);
  q.begin_batch(3);
  ASSERT_TRUE(q.arrival(0, 0, barrier_mode::weak, 0).ok());
  q.end_batch();
  EXPECT_TRUE(q.barrier_complete(0));
  EXPECT_THAT(drain(q), ElementsAre("weak barrier 0 on 0 at 3"));
}

TEST(ReceiveQueue, ArrivalOnAChannelThatDoesNotExistIsInvalidNamingTheNode) {
  receive_queue q(2);
  q.begin_batch(1);
  EXPECT_EQ(q.arrival(1, 9, barrier_mode::weak, 0),
            absl::InvalidArgumentError(
                "barrier arrival from node 1: channel 9 does not exist: channels are 0..7"));
}

TEST(ReceiveQueue, ArrivalInAModeThatDoesNotExistIsInvalid) {
  receive_queue q(2);
  q.begin_batch(1);
  EXPECT_EQ(
      q.arrival(1, 0, static_cast<barrier_mode>(7), 0),
      absl::InvalidArgumentError("barrier arrival from node 1 names mode 7, which does not exist"));
}

TEST(ReceiveQueue, ArrivalAtAnotherInstanceIsInvalid) {
  receive_queue q(2);
  q.begin_batch(1);
  EXPECT_EQ(q.arrival(1, 4, barrier_mode::strong, 1),
            absl::InvalidArgumentError(
                "node 1 arrived at barrier 1 on channel 4 while barrier 0 is in progress"));
}

TEST(ReceiveQueue, SecondArrivalFromANodeIsInvalidAndNotCounted) {
  receive_queue q(2);
  q.begin_batch(1);
  ASSERT_TRUE(q.arrival(0, 2, barrier_mode::strong, 0).ok());
  EXPECT_EQ(q.arrival(0, 2, barrier_mode::strong, 0),
            absl::InvalidArgumentError("node 0 arrived twice at barrier 0 on channel 2"));
  q.end_batch();
  EXPECT_TRUE(q.empty());
  q.begin_batch(2);
  ASSERT_TRUE(q.arrival(1, 2, barrier_mode::strong, 0).ok());
  q.end_batch();
  EXPECT_THAT(drain(q), ElementsAre("strong barrier 0 on 2 at 2"));
}

TEST(ReceiveQueue, ArrivalInAnotherModeThanTheOthersIsInvalidNamingBoth) {
  receive_queue q(3);
  q.begin_batch(1);
  ASSERT_TRUE(q.arrival(0, 0, barrier_mode::weak, 0).ok());
  EXPECT_EQ(
      q.arrival(2, 0, barrier_mode::strong, 0),
      absl::InvalidArgumentError("barrier 0 on channel 0: node 2 arrived strong, others weak"));
  // The rejected arrival did not count: node 2 may still arrive, in the right mode.
  ASSERT_TRUE(q.arrival(1, 0, barrier_mode::weak, 0).ok());
  ASSERT_TRUE(q.arrival(2, 0, barrier_mode::weak, 0).ok());
  q.end_batch();
  EXPECT_THAT(drain(q), ElementsAre("weak barrier 0 on 0 at 1"));
}

TEST(ReceiveQueue, NextInstanceMayUseTheOtherMode) {
  receive_queue q(2);
  q.begin_batch(1);
  ASSERT_TRUE(q.arrival(0, 0, barrier_mode::weak, 0).ok());
  ASSERT_TRUE(q.arrival(1, 0, barrier_mode::weak, 0).ok());
  // An arrival at the finished instance is now a contradiction.
  EXPECT_EQ(q.arrival(0, 0, barrier_mode::weak, 0).code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(q.arrival(0, 0, barrier_mode::strong, 1).ok());
  ASSERT_TRUE(q.arrival(1, 0, barrier_mode::strong, 1).ok());
  q.end_batch();
  EXPECT_THAT(drain(q), ElementsAre("weak barrier 0 on 0 at 1", "strong barrier 1 on 0 at 1"));
}

}  // namespace
}  // namespace iso::runtime
