// Unmarshaling of every generated message on malformed input: truncated encodings, random
// bytes and mutated encodings. Each must give InvalidArgument or a value that marshals back
// to exactly the same bytes; never a crash, a hang or a read past the buffer (this test runs
// under the asan preset too). A failed unmarshal leaves the destination untouched.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "iso/marshal.hpp"
#include "kinds.iso.hpp"

namespace {

namespace plain = iso::test::kinds::plain;
using ::testing::HasSubstr;

template <class T>
std::vector<std::byte> encode(const T& value) {
  iso::gather_list list;
  iso::marshal(value, list);
  return list.flatten();
}

// Unmarshals `bytes` into a copy of `sentinel`: on error it must still equal the sentinel
// and the message must say what failed; on success the value must marshal back to `bytes`.
template <class T>
bool probe(const std::vector<std::byte>& bytes, const T& sentinel) {
  // A copy of exactly the input's size on the heap, so that ASan sees any overread.
  std::unique_ptr<std::byte[]> exact(new std::byte[bytes.size() + 1]);
  if (!bytes.empty()) std::memcpy(exact.get(), bytes.data(), bytes.size());
  T out = sentinel;
  absl::Status s = iso::unmarshal(std::span<const std::byte>(exact.get(), bytes.size()), out);
  if (!s.ok()) {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr("unmarshal: "));
    EXPECT_TRUE(out == sentinel) << "a failed unmarshal changed its destination";
    return false;
  }
  EXPECT_EQ(encode(out), bytes) << "an accepted input is not the encoding of what it gave";
  return true;
}

plain::Everything sample_everything() {
  plain::Everything v;
  v.scalars.i64 = -3;
  v.scalars.flag = true;
  v.text = "text";
  v.blob = "blob";
  v.r_i32 = {1, 2, 3};
  v.r_bool = {1, 0};
  v.r_text = {"x", "yz"};
  v.r_blob = {"b"};
  v.inner = {.label = "in", .values = {4}, .where = {.x = 1, .y = 2}};
  v.r_inner = {{.label = "r", .values = {5, 6}, .where = {}}};
  v.r_point = {{.x = 7, .y = 8}};
  v.r_padded = {{.wide = 9, .narrow = 10}};
  v.r_flagged = {{.value = 11, .on = true, .off = false, .maybe = true}};
  v.r_empty.resize(2);
  v.o_i32 = 12;
  v.o_bool = true;
  v.o_text = "opt";
  v.o_point = plain::Point{.x = 13, .y = 14};
  v.done = true;
  return v;
}

// Every generated message: a sample value and a sentinel distinct from anything decoded.
template <class F>
void for_every_message(F&& f) {
  f(plain::Scalars{.i64 = 1, .db = 2.5, .i32 = 3, .color = plain::Color::COLOR_BLUE, .flag = true},
    plain::Scalars{.i64 = 99});
  f(plain::Point{.x = 1, .y = 2}, plain::Point{.x = 99});
  f(plain::Padded{.wide = 1, .narrow = 2}, plain::Padded{.wide = 99});
  f(plain::Flagged{.value = 1, .on = true, .off = false, .maybe = true},
    plain::Flagged{.value = 99});
  f(plain::Empty{}, plain::Empty{});
  plain::Everything_Inner inner_sentinel;
  inner_sentinel.label = "sentinel";
  f(plain::Everything_Inner{.label = "l", .values = {1, 2}, .where = {.x = 3, .y = 4}},
    inner_sentinel);
  plain::Everything sentinel;
  sentinel.text = "sentinel";
  f(sample_everything(), sentinel);
  f(plain::IntArray{.values = {1, 2, 3}}, plain::IntArray{.values = {99}});
  f(plain::Counter{.value = 1, .owner = "me"}, plain::Counter{.value = 99, .owner = ""});
  f(plain::Delta{.by = 5}, plain::Delta{.by = 99});
}

TEST(MarshalFuzz, EveryTruncationOfEveryMessageIsAClearError) {
  for_every_message([](const auto& sample, const auto& sentinel) {
    std::vector<std::byte> bytes = encode(sample);
    EXPECT_TRUE(probe(bytes, sentinel));
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      std::vector<std::byte> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
      EXPECT_FALSE(probe(cut, sentinel)) << iso_type_name(sample) << " cut to " << n;
    }
    // One byte too many is an error as well.
    bytes.push_back(std::byte{0});
    EXPECT_FALSE(probe(bytes, sentinel));
  });
}

TEST(MarshalFuzz, RandomBytesNeverCrash) {
  std::mt19937_64 rng(15);
  for_every_message([&](const auto& sample, const auto& sentinel) {
    (void)sample;
    for (int round = 0; round < 20000; ++round) {
      std::vector<std::byte> bytes(rng() % 200);
      // Mostly small values, so that lengths are sometimes plausible.
      for (std::byte& b : bytes) b = std::byte(rng() % 4 == 0 ? rng() : rng() % 3);
      probe(bytes, sentinel);
    }
  });
}

TEST(MarshalFuzz, MutatedEncodingsNeverCrash) {
  std::mt19937_64 rng(150);
  for_every_message([&](const auto& sample, const auto& sentinel) {
    const std::vector<std::byte> clean = encode(sample);
    if (clean.empty()) return;
    for (int round = 0; round < 20000; ++round) {
      std::vector<std::byte> bytes = clean;
      const int flips = 1 + static_cast<int>(rng() % 3);
      for (int i = 0; i < flips; ++i) bytes[rng() % bytes.size()] = std::byte(rng());
      probe(bytes, sentinel);
    }
  });
}

std::vector<std::byte> with_word(std::vector<std::byte> bytes, std::size_t at, std::uint64_t w) {
  if (bytes.size() < at + sizeof w) {
    ADD_FAILURE() << "no word at " << at << " in " << bytes.size() << " bytes";
    return bytes;
  }
  std::memcpy(bytes.data() + at, &w, sizeof w);
  return bytes;
}

TEST(MarshalFuzz, HugeLengthIsRefusedBeforeAnyAllocation) {
  // IntArray: the length block (one word), then the values.
  const std::vector<std::byte> bytes =
      with_word(encode(plain::IntArray{.values = {1}}), 0, std::uint64_t{1} << 62);
  plain::IntArray out;
  absl::Status s = iso::unmarshal(bytes, out);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("iso.test.kinds.IntArray.values claims 4611686018427387904 elements"));
}

TEST(MarshalFuzz, ManyEmptyElementsAreBounded) {
  plain::Everything v;
  std::vector<std::byte> bytes = encode(v);
  // Everything's fixed run is 5 bytes; r_empty has the 17th word of its length block (its
  // singular message fields take none).
  bytes = with_word(bytes, 5 + 16 * 8, std::uint64_t{1} << 40);
  absl::Status s = iso::unmarshal(bytes, v);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("iso.test.kinds.Everything.r_empty claims 1099511627776 elements"));
}

TEST(MarshalFuzz, BadBoolByteNamesTheField) {
  std::vector<std::byte> bytes = encode(plain::Flagged{.value = 1});
  bytes[5] = std::byte{2};  // `off`, after the 4-byte value and `on`
  plain::Flagged out;
  absl::Status s = iso::unmarshal(bytes, out);
  EXPECT_THAT(std::string(s.message()), HasSubstr("malformed iso.test.kinds.Flagged.off"));
}

TEST(MarshalFuzz, TruncationNamesFieldOffsetAndSizes) {
  std::vector<std::byte> bytes = encode(plain::Counter{.value = 1, .owner = "abcdef"});
  bytes.pop_back();  // the last 2 bytes of "abcdef"
  bytes.pop_back();
  plain::Counter out;
  absl::Status s = iso::unmarshal(bytes, out);
  EXPECT_EQ(s.message(),
            "unmarshal: truncated input: iso.test.kinds.Counter.owner needs 6 bytes at offset 16, "
            "only 4 left");
}

TEST(MarshalFuzz, LeftoverBytesAreAnError) {
  std::vector<std::byte> bytes = encode(plain::Delta{.by = 1});
  bytes.push_back(std::byte{0});
  plain::Delta out;
  absl::Status s = iso::unmarshal(bytes, out);
  EXPECT_EQ(s.message(),
            "unmarshal: 1 bytes left over after iso.test.kinds.Delta at offset 8 of 9");
}

}  // namespace
