// The NIC's outbound side over a scripted transport: packets leave at once when the path is
// free and otherwise wait, in order, per destination; nothing overtakes a waiting packet;
// every packet gets its destination's next sequence number (and in paranoid mode the CRC-32
// of what follows the header); packets to this node go to the loopback queue; and errors
// other than back-pressure come back to the caller.
#include "nicfw/outbound.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace iso::nicfw {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// A transport whose paths are opened and closed by the test; it keeps what it sent.
class scripted_transport : public comm::transport {
 public:
  scripted_transport(comm::node_id self, std::uint32_t size, std::size_t max_packet = 1024)
      : comm::transport(self, size), max_packet_(max_packet) {}

  struct sent_packet {
    comm::node_id destination;
    std::vector<std::byte> bytes;
  };

  [[nodiscard]] std::size_t max_packet_size() const override { return max_packet_; }
  absl::Status send(comm::node_id destination, std::span<const comm::byte_span> pieces) override {
    ++send_calls;
    if (destination >= size()) return absl::InvalidArgumentError("no such node");
    std::vector<std::byte> bytes;
    for (const comm::byte_span& piece : pieces)
      bytes.insert(bytes.end(), piece.begin(), piece.end());
    if (bytes.size() > max_packet_) return absl::OutOfRangeError("packet too large");
    if (!failure.ok()) return failure;
    if (closed.count(destination) != 0) return absl::UnavailableError("path full");
    sent.push_back({destination, std::move(bytes)});
    return absl::OkStatus();
  }
  absl::Status poll(comm::packet_upcall, std::size_t& handled, std::size_t) override {
    handled = 0;
    return absl::OkStatus();
  }
  void wait(absl::Duration, absl::FunctionRef<bool()>) override {}
  void wake() override {}
  [[nodiscard]] comm::transport_counters counters() const override { return {}; }

  std::set<comm::node_id> closed;  // destinations whose path is full
  absl::Status failure;            // returned by every send while not OK
  std::vector<sent_packet> sent;
  int send_calls = 0;

 protected:
  void release_held(comm::node_id, std::uint64_t) override {}

 private:
  std::size_t max_packet_;
};

packet_header header_of(std::span<const std::byte> bytes) {
  packet_header h{};
  EXPECT_GE(bytes.size(), sizeof(h));
  if (bytes.size() >= sizeof(h)) std::memcpy(&h, bytes.data(), sizeof(h));
  return h;
}

std::vector<std::byte> body_of(std::span<const std::byte> bytes) {
  if (bytes.size() < sizeof(packet_header)) return {};
  return {bytes.begin() + sizeof(packet_header), bytes.end()};
}

std::vector<std::byte> text(const std::string& s) {
  std::vector<std::byte> out;
  for (char c : s) out.push_back(static_cast<std::byte>(c));
  return out;
}

// Sends a packet of `type` with `body` as a second piece.
absl::Status send(outbound& out, comm::node_id to, packet_type type,
                  const std::vector<std::byte>& body, std::uint64_t stamp = 0) {
  packet_header h{.type = type};
  h.stamp = stamp;
  h.sequence = 999;  // outbound sets these
  h.checksum = 999;
  const std::array<comm::byte_span, 2> pieces{std::as_bytes(std::span(&h, 1)),
                                              comm::byte_span(body)};
  return out.send(to, pieces);
}

std::vector<std::uint64_t> stamps_to(const scripted_transport& t, comm::node_id to) {
  std::vector<std::uint64_t> out;
  for (const auto& p : t.sent) {
    if (p.destination == to) out.push_back(header_of(p.bytes).stamp);
  }
  return out;
}

TEST(Checksum, IsZlibsCrc32OfThePiecesInOrder) {
  const std::vector<std::byte> all = text("123456789");
  const std::array<comm::byte_span, 1> whole{comm::byte_span(all)};
  EXPECT_EQ(checksum(whole), 0xCBF43926u);  // the CRC-32 check value
  const std::array<comm::byte_span, 4> split{comm::byte_span(all).first(2), comm::byte_span(),
                                             comm::byte_span(all).subspan(2, 5),
                                             comm::byte_span(all).subspan(7)};
  EXPECT_EQ(checksum(split), 0xCBF43926u);
  EXPECT_EQ(checksum({}), 0u);
}

TEST(Outbound, FreePathSendsAtOnceWithSequencePerDestination) {
  scripted_transport t(0, 3);
  outbound out(t, /*paranoid=*/false);
  ASSERT_TRUE(send(out, 1, packet_type::iso_data, text("a"), 10).ok());
  ASSERT_TRUE(send(out, 2, packet_type::direct, text("b"), 20).ok());
  ASSERT_TRUE(send(out, 1, packet_type::credit, text("c"), 11).ok());
  EXPECT_FALSE(out.has_backlog());
  ASSERT_EQ(t.sent.size(), 3u);
  const packet_header first = header_of(t.sent[0].bytes);
  EXPECT_EQ(first.type, packet_type::iso_data);
  EXPECT_EQ(first.stamp, 10u);
  EXPECT_EQ(first.sequence, 0u);
  EXPECT_EQ(first.checksum, 0u);
  EXPECT_EQ(body_of(t.sent[0].bytes), text("a"));
  EXPECT_EQ(header_of(t.sent[1].bytes).sequence, 0u);  // node 2's first
  EXPECT_EQ(header_of(t.sent[2].bytes).sequence, 1u);  // node 1's second
  EXPECT_EQ(header_of(t.sent[2].bytes).type, packet_type::credit);
}

TEST(Outbound, BytesAfterTheHeaderInTheFirstPieceAreKept) {
  scripted_transport t(0, 2);
  outbound out(t, false);
  std::vector<std::byte> first(sizeof(packet_header));
  packet_header h{.type = packet_type::demand};
  h.a = 7;
  std::memcpy(first.data(), &h, sizeof(h));
  const std::vector<std::byte> inline_part = text("xyz");
  first.insert(first.end(), inline_part.begin(), inline_part.end());
  const std::vector<std::byte> second = text("!");
  const std::array<comm::byte_span, 2> pieces{comm::byte_span(first), comm::byte_span(second)};
  ASSERT_TRUE(out.send(1, pieces).ok());
  ASSERT_EQ(t.sent.size(), 1u);
  EXPECT_EQ(body_of(t.sent[0].bytes), text("xyz!"));
  EXPECT_EQ(header_of(t.sent[0].bytes).a, 7u);
  EXPECT_EQ(header_of(t.sent[0].bytes).type, packet_type::demand);
}

TEST(Outbound, ParanoidModeChecksumsEverythingAfterTheHeader) {
  scripted_transport t(0, 2);
  outbound out(t, /*paranoid=*/true);
  ASSERT_TRUE(send(out, 1, packet_type::direct, text("123456789")).ok());
  ASSERT_TRUE(send(out, 1, packet_type::credit_request, {}).ok());
  ASSERT_EQ(t.sent.size(), 2u);
  EXPECT_EQ(header_of(t.sent[0].bytes).checksum, 0xCBF43926u);
  EXPECT_EQ(header_of(t.sent[1].bytes).checksum, 0u);  // CRC-32 of nothing
}

TEST(Outbound, FullPathQueuesAndNothingOvertakesTheQueue) {
  scripted_transport t(0, 3);
  outbound out(t, false);
  t.closed.insert(1);
  ASSERT_TRUE(send(out, 1, packet_type::direct, text("1"), 1).ok());
  ASSERT_TRUE(send(out, 1, packet_type::direct, text("2"), 2).ok());
  EXPECT_TRUE(out.has_backlog());
  EXPECT_EQ(out.backlog_packets(), 2u);
  EXPECT_EQ(out.backlog_to(1), 2u);
  EXPECT_EQ(out.backlog_to(2), 0u);
  // The path opens, but a new packet must still wait behind the queued ones.
  t.closed.clear();
  const int calls = t.send_calls;
  ASSERT_TRUE(send(out, 1, packet_type::direct, text("3"), 3).ok());
  EXPECT_EQ(t.send_calls, calls);
  EXPECT_EQ(out.backlog_to(1), 3u);
  EXPECT_THAT(stamps_to(t, 1), IsEmpty());
  std::size_t flushed = 0;
  ASSERT_TRUE(out.flush(flushed).ok());
  EXPECT_EQ(flushed, 3u);
  EXPECT_FALSE(out.has_backlog());
  EXPECT_EQ(out.backlog_to(1), 0u);
  EXPECT_THAT(stamps_to(t, 1), ElementsAre(1u, 2u, 3u));
  // Queued packets were stamped as they were submitted.
  for (std::size_t i = 0; i < t.sent.size(); ++i) {
    EXPECT_EQ(header_of(t.sent[i].bytes).sequence, i);
  }
}

TEST(Outbound, OneFullPathDoesNotHoldUpAnother) {
  scripted_transport t(0, 3);
  outbound out(t, false);
  t.closed.insert(1);
  ASSERT_TRUE(send(out, 1, packet_type::direct, text("x"), 1).ok());
  ASSERT_TRUE(send(out, 2, packet_type::direct, text("y"), 2).ok());
  EXPECT_THAT(stamps_to(t, 2), ElementsAre(2u));
  EXPECT_EQ(out.backlog_packets(), 1u);
}

TEST(Outbound, FlushSendsWhatItCanAndKeepsTheRestInOrder) {
  scripted_transport t(0, 3);
  outbound out(t, false);
  std::size_t flushed = 7;
  ASSERT_TRUE(out.flush(flushed).ok());
  EXPECT_EQ(flushed, 0u);
  t.closed = {1, 2};
  for (std::uint64_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(send(out, 1, packet_type::direct, text("p"), 10 + i).ok());
    ASSERT_TRUE(send(out, 2, packet_type::direct, text("q"), 20 + i).ok());
  }
  t.closed = {1};
  ASSERT_TRUE(out.flush(flushed).ok());
  EXPECT_EQ(flushed, 3u);
  EXPECT_THAT(stamps_to(t, 2), ElementsAre(20u, 21u, 22u));
  EXPECT_EQ(out.backlog_to(1), 3u);
  EXPECT_EQ(out.backlog_packets(), 3u);
  t.closed.clear();
  ASSERT_TRUE(out.flush(flushed).ok());
  EXPECT_EQ(flushed, 3u);
  EXPECT_THAT(stamps_to(t, 1), ElementsAre(10u, 11u, 12u));
  EXPECT_FALSE(out.has_backlog());
}

TEST(Outbound, QueuedPacketIsACopy) {
  scripted_transport t(0, 2);
  outbound out(t, false);
  t.closed.insert(1);
  std::vector<std::byte> body = text("keep");
  ASSERT_TRUE(send(out, 1, packet_type::direct, body).ok());
  body.assign(body.size(), std::byte{0});
  t.closed.clear();
  std::size_t flushed = 0;
  ASSERT_TRUE(out.flush(flushed).ok());
  ASSERT_EQ(t.sent.size(), 1u);
  EXPECT_EQ(body_of(t.sent[0].bytes), text("keep"));
}

TEST(Outbound, TransportErrorsOtherThanBackPressureAreReturned) {
  scripted_transport t(0, 2, /*max_packet=*/64);
  outbound out(t, false);
  EXPECT_EQ(send(out, 1, packet_type::direct, std::vector<std::byte>(100)).code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(send(out, 5, packet_type::direct, text("x")).code(),
            absl::StatusCode::kInvalidArgument);
  t.failure = absl::DataLossError("ring corrupt");
  EXPECT_EQ(send(out, 1, packet_type::direct, text("x")), absl::DataLossError("ring corrupt"));
  EXPECT_FALSE(out.has_backlog());
  EXPECT_THAT(t.sent, IsEmpty());
}

TEST(Outbound, OversizePacketIsRefusedEvenBehindAQueue) {
  scripted_transport t(0, 2, /*max_packet=*/64);
  outbound out(t, false);
  t.closed.insert(1);
  ASSERT_TRUE(send(out, 1, packet_type::direct, text("small")).ok());
  EXPECT_EQ(send(out, 1, packet_type::direct, std::vector<std::byte>(100)).code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(out.backlog_to(1), 1u);
}

TEST(Outbound, FlushReturnsAnErrorOtherThanBackPressure) {
  scripted_transport t(0, 2);
  outbound out(t, false);
  t.closed.insert(1);
  ASSERT_TRUE(send(out, 1, packet_type::direct, text("a")).ok());
  t.failure = absl::DataLossError("ring corrupt");
  std::size_t flushed = 0;
  EXPECT_EQ(out.flush(flushed), absl::DataLossError("ring corrupt"));
  EXPECT_EQ(out.backlog_to(1), 1u);
}

TEST(Outbound, PacketsToThisNodeGoToTheLoopbackQueueInOrder) {
  scripted_transport t(1, 3);
  outbound out(t, /*paranoid=*/true);
  EXPECT_FALSE(out.has_loopback());
  ASSERT_TRUE(send(out, 1, packet_type::link_token, text("123456789"), 5).ok());
  ASSERT_TRUE(send(out, 1, packet_type::link_token, text("second"), 6).ok());
  EXPECT_THAT(t.sent, IsEmpty());
  EXPECT_EQ(t.send_calls, 0);
  EXPECT_FALSE(out.has_backlog());
  ASSERT_TRUE(out.has_loopback());
  std::vector<std::byte> into;
  out.take_loopback(into);
  EXPECT_EQ(header_of(into).stamp, 5u);
  EXPECT_EQ(header_of(into).sequence, 0u);
  EXPECT_EQ(header_of(into).checksum, 0xCBF43926u);
  EXPECT_EQ(body_of(into), text("123456789"));
  ASSERT_TRUE(out.has_loopback());
  out.take_loopback(into);
  EXPECT_EQ(header_of(into).stamp, 6u);
  EXPECT_EQ(header_of(into).sequence, 1u);
  EXPECT_EQ(body_of(into), text("second"));
  EXPECT_FALSE(out.has_loopback());
}

TEST(Outbound, LoopbackReusesTheCallersOldBufferWithoutStaleBytes) {
  // Tokens between co-hosted TMs flow every pulse: the buffer a caller gives up in
  // take_loopback() carries the next loopback packet, and only that packet.
  scripted_transport t(0, 1);
  outbound out(t, false);
  std::vector<std::byte> mine(512, std::byte{9});
  const std::byte* storage = mine.data();
  ASSERT_TRUE(send(out, 0, packet_type::link_token, text("first")).ok());
  out.take_loopback(mine);
  EXPECT_EQ(body_of(mine), text("first"));
  ASSERT_TRUE(send(out, 0, packet_type::link_token, text("ab")).ok());
  std::vector<std::byte> next;
  out.take_loopback(next);
  EXPECT_EQ(next.data(), storage);
  EXPECT_EQ(next.size(), sizeof(packet_header) + 2);
  EXPECT_EQ(body_of(next), text("ab"));
}

TEST(Outbound, CountsPacketsPerDestinationAndType) {
  scripted_transport t(0, 3);
  outbound out(t, false);
  t.closed.insert(2);
  ASSERT_TRUE(send(out, 1, packet_type::iso_data, text("a")).ok());
  ASSERT_TRUE(send(out, 1, packet_type::iso_data, text("b")).ok());
  ASSERT_TRUE(send(out, 1, packet_type::credit, {}).ok());
  ASSERT_TRUE(send(out, 2, packet_type::iso_data, text("c")).ok());  // queued counts too
  ASSERT_TRUE(send(out, 0, packet_type::link_token, {}).ok());       // loopback counts too
  EXPECT_EQ(out.sent().get(1, packet_type::iso_data), 2u);
  EXPECT_EQ(out.sent().get(1, packet_type::credit), 1u);
  EXPECT_EQ(out.sent().get(1, packet_type::direct), 0u);
  EXPECT_EQ(out.sent().get(2, packet_type::iso_data), 1u);
  EXPECT_EQ(out.sent().get(0, packet_type::link_token), 1u);
}

}  // namespace
}  // namespace iso::nicfw
