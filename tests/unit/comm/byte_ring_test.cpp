#include "comm/byte_ring.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

namespace iso::comm {
namespace {

struct ring_memory {
  explicit ring_memory(std::size_t bytes_of_space) : capacity(bytes_of_space) {
    bytes.resize(byte_ring_footprint(bytes_of_space) / 8 + 1);
  }
  std::byte* data() { return reinterpret_cast<std::byte*>(bytes.data()); }
  std::size_t capacity;
  std::vector<std::uint64_t> bytes;  // zeroed and 8-byte aligned
};

std::vector<std::byte> pattern(std::size_t size, std::uint8_t seed) {
  std::vector<std::byte> out(size);
  for (std::size_t i = 0; i < size; ++i) out[i] = std::byte(static_cast<std::uint8_t>(seed + i));
  return out;
}

bool push(ring_producer& p, const std::vector<std::byte>& bytes) {
  const byte_span piece(bytes);
  return p.try_push(std::span<const byte_span>(&piece, 1), bytes.size());
}

TEST(ByteRing, EmptyRingHasNothing) {
  ring_memory mem(256);
  ring_consumer c(mem.data(), mem.capacity);
  ring_record r;
  EXPECT_EQ(c.peek(r), ring_consumer::peek_result::empty);
  EXPECT_FALSE(c.has_pending());
}

TEST(ByteRing, GatheredPiecesArriveAsOneRecord) {
  ring_memory mem(256);
  ring_producer p(mem.data(), mem.capacity);
  ring_consumer c(mem.data(), mem.capacity);
  const auto head = pattern(3, 1);
  const auto body = pattern(10, 50);
  const byte_span pieces[] = {head, body};
  ASSERT_TRUE(p.try_push(pieces, 13));
  ring_record r;
  ASSERT_EQ(c.peek(r), ring_consumer::peek_result::record);
  ASSERT_EQ(r.payload.size(), 13u);
  EXPECT_EQ(std::memcmp(r.payload.data(), head.data(), 3), 0);
  EXPECT_EQ(std::memcmp(r.payload.data() + 3, body.data(), 10), 0);
}

TEST(ByteRing, FullRingRefusesUntilReleased) {
  ring_memory mem(256);
  ring_producer p(mem.data(), mem.capacity);
  ring_consumer c(mem.data(), mem.capacity);
  const auto record = pattern(40, 7);  // 48 bytes with its header
  int pushed = 0;
  while (push(p, record)) ++pushed;
  EXPECT_EQ(pushed, 5);  // 5 * 48 + the next header slot fit in 256, a sixth does not
  // The sixth record must wrap, which needs the 16 bytes left at the end plus 48 + 8 at the
  // start: two records' worth of released space.
  ring_record r;
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(c.peek(r), ring_consumer::peek_result::record);
    c.advance(r);
  }
  EXPECT_FALSE(push(p, record)) << "space must not be reused before release";
  c.release_to(r.end);
  EXPECT_TRUE(push(p, record));
}

// Every size, many laps: records that straddle the end are wrapped, never torn.
TEST(ByteRing, WrapsWithoutTearingAnySize) {
  ring_memory mem(1024);
  ring_producer p(mem.data(), mem.capacity);
  ring_consumer c(mem.data(), mem.capacity);
  const std::size_t max = byte_ring_max_payload(mem.capacity);
  std::size_t expected_size = 0;
  std::uint8_t expected_seed = 0;
  std::size_t next_size = 0;
  std::uint8_t next_seed = 0;
  int received = 0;
  while (received < 5000) {
    while (push(p, pattern(next_size, next_seed))) {
      next_size = (next_size + 13) % (max + 1);
      ++next_seed;
    }
    ring_record r;
    while (c.peek(r) == ring_consumer::peek_result::record) {
      ASSERT_EQ(r.payload.size(), expected_size) << "record " << received;
      const auto want = pattern(expected_size, expected_seed);
      ASSERT_TRUE(std::equal(want.begin(), want.end(), r.payload.begin())) << "record " << received;
      c.advance(r);
      c.release_to(r.end);
      expected_size = (expected_size + 13) % (max + 1);
      ++expected_seed;
      ++received;
    }
  }
}

// A held record, and whatever follows it, stays unseen until it is published, and the
// producer may rewrite its payload meanwhile; at the end of the space too, where the
// record goes behind a wrap marker.
TEST(ByteRing, AHeldRecordAndThoseAfterItAppearWhenPublished) {
  ring_memory mem(256);
  ring_producer p(mem.data(), mem.capacity);
  ring_consumer c(mem.data(), mem.capacity);
  ring_record r;
  for (int round = 0; round < 12; ++round) {  // 12 x (48 + 32) bytes: wraps several times
    const auto held = pattern(40, static_cast<std::uint8_t>(round));
    const auto next = pattern(24, static_cast<std::uint8_t>(100 + round));
    const byte_span piece(held);
    ASSERT_TRUE(p.try_push_held(std::span<const byte_span>(&piece, 1), held.size()));
    ASSERT_TRUE(push(p, next));
    EXPECT_EQ(c.peek(r), ring_consumer::peek_result::empty) << "round " << round;
    p.held_payload()[0] = std::byte{0xee};
    p.publish_held();
    EXPECT_EQ(p.held_payload(), nullptr);

    ASSERT_EQ(c.peek(r), ring_consumer::peek_result::record) << "round " << round;
    auto expected = held;
    expected[0] = std::byte{0xee};
    EXPECT_TRUE(std::equal(r.payload.begin(), r.payload.end(), expected.begin(), expected.end()));
    c.advance(r);
    c.release_to(r.end);
    ASSERT_EQ(c.peek(r), ring_consumer::peek_result::record);
    EXPECT_TRUE(std::equal(r.payload.begin(), r.payload.end(), next.begin(), next.end()));
    c.advance(r);
    c.release_to(r.end);
  }
}

TEST(ByteRing, ReportsAHeaderThatDoesNotFit) {
  ring_memory mem(256);
  ring_consumer c(mem.data(), mem.capacity);
  const std::uint64_t bogus = (std::uint64_t{1} << 63) | 100000;  // valid bit, absurd length
  std::memcpy(mem.data(), &bogus, sizeof(bogus));
  ring_record r;
  EXPECT_EQ(c.peek(r), ring_consumer::peek_result::corrupt);
}

}  // namespace
}  // namespace iso::comm
