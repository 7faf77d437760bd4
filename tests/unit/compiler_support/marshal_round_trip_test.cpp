// Generated marshaling of every field kind: a value goes through gather, a flat copy and
// unmarshal, must come back equal, and must match, field by field, what protobuf parses
// from the equivalent protobuf message built from the same values.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "iso/marshal.hpp"
#include "kinds.iso.hpp"
#include "kinds.pb.h"

namespace {

namespace plain = iso::test::kinds::plain;
namespace pb = iso::test::kinds;

// --- The same values as a protobuf message ---------------------------------------------------

pb::Scalars to_proto(const plain::Scalars& v) {
  pb::Scalars p;
  p.set_flag(v.flag);
  p.set_i32(v.i32);
  p.set_i64(v.i64);
  p.set_u32(v.u32);
  p.set_u64(v.u64);
  p.set_s32(v.s32);
  p.set_s64(v.s64);
  p.set_f32(v.f32);
  p.set_f64(v.f64);
  p.set_sf32(v.sf32);
  p.set_sf64(v.sf64);
  p.set_fl(v.fl);
  p.set_db(v.db);
  p.set_color(static_cast<pb::Color>(v.color));
  return p;
}

pb::Point to_proto(const plain::Point& v) {
  pb::Point p;
  p.set_x(v.x);
  p.set_y(v.y);
  return p;
}

pb::Everything::Inner to_proto(const plain::Everything_Inner& v) {
  pb::Everything::Inner p;
  p.set_label(v.label);
  for (std::int32_t x : v.values) p.add_values(x);
  *p.mutable_where() = to_proto(v.where);
  return p;
}

pb::Everything to_proto(const plain::Everything& v) {
  pb::Everything p;
  *p.mutable_scalars() = to_proto(v.scalars);
  p.set_text(v.text);
  p.set_blob(v.blob);
  for (auto x : v.r_i32) p.add_r_i32(x);
  for (auto x : v.r_i64) p.add_r_i64(x);
  for (auto x : v.r_u32) p.add_r_u32(x);
  for (auto x : v.r_u64) p.add_r_u64(x);
  for (auto x : v.r_fl) p.add_r_fl(x);
  for (auto x : v.r_db) p.add_r_db(x);
  for (auto x : v.r_bool) p.add_r_bool(x != 0);
  for (auto x : v.r_color) p.add_r_color(static_cast<pb::Color>(x));
  for (const auto& x : v.r_text) p.add_r_text(x);
  for (const auto& x : v.r_blob) p.add_r_blob(x);
  *p.mutable_inner() = to_proto(v.inner);
  for (const auto& x : v.r_inner) *p.add_r_inner() = to_proto(x);
  for (const auto& x : v.r_point) *p.add_r_point() = to_proto(x);
  for (const auto& x : v.r_padded) {
    pb::Padded* q = p.add_r_padded();
    q->set_wide(x.wide);
    q->set_narrow(x.narrow);
  }
  for (const auto& x : v.r_flagged) {
    pb::Flagged* q = p.add_r_flagged();
    q->set_value(x.value);
    q->set_on(x.on);
    q->set_off(x.off);
    q->set_maybe(x.maybe);
  }
  for (std::size_t i = 0; i < v.r_empty.size(); ++i) p.add_r_empty();
  if (v.o_i32) p.set_o_i32(*v.o_i32);
  if (v.o_db) p.set_o_db(*v.o_db);
  if (v.o_bool) p.set_o_bool(*v.o_bool);
  if (v.o_color) p.set_o_color(static_cast<pb::Color>(*v.o_color));
  if (v.o_text) p.set_o_text(*v.o_text);
  if (v.o_blob) p.set_o_blob(*v.o_blob);
  if (v.o_point) *p.mutable_o_point() = to_proto(*v.o_point);
  p.set_mode(static_cast<pb::Everything::Mode>(v.mode));
  p.set_done(v.done);
  return p;
}

// --- Field-by-field comparison with protobuf's parse ---------------------------------------

// Bitwise, so that -0.0 and infinities are compared exactly.
bool same_bits(float a, float b) {
  return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
}
bool same_bits(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

void expect_same(const plain::Scalars& v, const pb::Scalars& p) {
  EXPECT_EQ(v.flag, p.flag());
  EXPECT_EQ(v.i32, p.i32());
  EXPECT_EQ(v.i64, p.i64());
  EXPECT_EQ(v.u32, p.u32());
  EXPECT_EQ(v.u64, p.u64());
  EXPECT_EQ(v.s32, p.s32());
  EXPECT_EQ(v.s64, p.s64());
  EXPECT_EQ(v.f32, p.f32());
  EXPECT_EQ(v.f64, p.f64());
  EXPECT_EQ(v.sf32, p.sf32());
  EXPECT_EQ(v.sf64, p.sf64());
  EXPECT_TRUE(same_bits(v.fl, p.fl())) << v.fl << " vs " << p.fl();
  EXPECT_TRUE(same_bits(v.db, p.db())) << v.db << " vs " << p.db();
  EXPECT_EQ(static_cast<int>(v.color), static_cast<int>(p.color()));
}

void expect_same(const plain::Point& v, const pb::Point& p) {
  EXPECT_EQ(v.x, p.x());
  EXPECT_EQ(v.y, p.y());
}

void expect_same(const plain::Everything_Inner& v, const pb::Everything::Inner& p) {
  EXPECT_EQ(v.label, p.label());
  EXPECT_EQ(v.values, std::vector<std::int32_t>(p.values().begin(), p.values().end()));
  expect_same(v.where, p.where());
}

template <class T, class R>
std::vector<T> as_vector(const R& repeated) {
  return std::vector<T>(repeated.begin(), repeated.end());
}

void expect_same(const plain::Everything& v, const pb::Everything& p) {
  expect_same(v.scalars, p.scalars());
  EXPECT_EQ(v.text, p.text());
  EXPECT_EQ(v.blob, p.blob());
  EXPECT_EQ(v.r_i32, as_vector<std::int32_t>(p.r_i32()));
  EXPECT_EQ(v.r_i64, as_vector<std::int64_t>(p.r_i64()));
  EXPECT_EQ(v.r_u32, as_vector<std::uint32_t>(p.r_u32()));
  EXPECT_EQ(v.r_u64, as_vector<std::uint64_t>(p.r_u64()));
  EXPECT_EQ(v.r_fl, as_vector<float>(p.r_fl()));
  EXPECT_EQ(v.r_db, as_vector<double>(p.r_db()));
  ASSERT_EQ(v.r_bool.size(), static_cast<std::size_t>(p.r_bool_size()));
  for (int i = 0; i < p.r_bool_size(); ++i) EXPECT_EQ(v.r_bool[i] != 0, p.r_bool(i));
  ASSERT_EQ(v.r_color.size(), static_cast<std::size_t>(p.r_color_size()));
  for (int i = 0; i < p.r_color_size(); ++i) {
    EXPECT_EQ(static_cast<int>(v.r_color[i]), p.r_color(i));
  }
  EXPECT_EQ(v.r_text, as_vector<std::string>(p.r_text()));
  EXPECT_EQ(v.r_blob, as_vector<std::string>(p.r_blob()));
  expect_same(v.inner, p.inner());
  ASSERT_EQ(v.r_inner.size(), static_cast<std::size_t>(p.r_inner_size()));
  for (int i = 0; i < p.r_inner_size(); ++i) expect_same(v.r_inner[i], p.r_inner(i));
  ASSERT_EQ(v.r_point.size(), static_cast<std::size_t>(p.r_point_size()));
  for (int i = 0; i < p.r_point_size(); ++i) expect_same(v.r_point[i], p.r_point(i));
  ASSERT_EQ(v.r_padded.size(), static_cast<std::size_t>(p.r_padded_size()));
  for (int i = 0; i < p.r_padded_size(); ++i) {
    EXPECT_EQ(v.r_padded[i].wide, p.r_padded(i).wide());
    EXPECT_EQ(v.r_padded[i].narrow, p.r_padded(i).narrow());
  }
  ASSERT_EQ(v.r_flagged.size(), static_cast<std::size_t>(p.r_flagged_size()));
  for (int i = 0; i < p.r_flagged_size(); ++i) {
    EXPECT_EQ(v.r_flagged[i].value, p.r_flagged(i).value());
    EXPECT_EQ(v.r_flagged[i].on, p.r_flagged(i).on());
    EXPECT_EQ(v.r_flagged[i].off, p.r_flagged(i).off());
    EXPECT_EQ(v.r_flagged[i].maybe, p.r_flagged(i).maybe());
  }
  EXPECT_EQ(v.r_empty.size(), static_cast<std::size_t>(p.r_empty_size()));
  EXPECT_EQ(v.o_i32.has_value(), p.has_o_i32());
  if (v.o_i32) {
    EXPECT_EQ(*v.o_i32, p.o_i32());
  }
  EXPECT_EQ(v.o_db.has_value(), p.has_o_db());
  if (v.o_db) {
    EXPECT_TRUE(same_bits(*v.o_db, p.o_db()));
  }
  EXPECT_EQ(v.o_bool.has_value(), p.has_o_bool());
  if (v.o_bool) {
    EXPECT_EQ(*v.o_bool, p.o_bool());
  }
  EXPECT_EQ(v.o_color.has_value(), p.has_o_color());
  if (v.o_color) {
    EXPECT_EQ(static_cast<int>(*v.o_color), static_cast<int>(p.o_color()));
  }
  EXPECT_EQ(v.o_text.has_value(), p.has_o_text());
  if (v.o_text) {
    EXPECT_EQ(*v.o_text, p.o_text());
  }
  EXPECT_EQ(v.o_blob.has_value(), p.has_o_blob());
  if (v.o_blob) {
    EXPECT_EQ(*v.o_blob, p.o_blob());
  }
  EXPECT_EQ(v.o_point.has_value(), p.has_o_point());
  if (v.o_point) {
    expect_same(*v.o_point, p.o_point());
  }
  EXPECT_EQ(static_cast<int>(v.mode), static_cast<int>(p.mode()));
  EXPECT_EQ(v.done, p.done());
}

// --- The round trip ----------------------------------------------------------------------------

// Marshals, copies the gather list as a transport would, unmarshals; checks the sizes the
// list announced.
template <class T>
T through_the_wire(const T& value) {
  iso::gather_list list;
  iso::marshal(value, list);
  const iso::gather_size need = iso_gather_size(value);
  EXPECT_EQ(list.entries().size(), need.entries);
  EXPECT_EQ(list.bytes(), need.bytes);
  std::vector<std::byte> bytes = list.flatten();
  EXPECT_EQ(bytes.size(), need.bytes);
  T back{};
  absl::Status s = iso::unmarshal(bytes, back);
  EXPECT_TRUE(s.ok()) << s;
  return back;
}

// The generated round trip, then protobuf's serialize and parse of the same values, then a
// field-by-field comparison of the two results.
void check_round_trip(const plain::Everything& value) {
  plain::Everything back = through_the_wire(value);
  EXPECT_TRUE(back == value);
  pb::Everything parsed;
  ASSERT_TRUE(parsed.ParseFromString(to_proto(value).SerializeAsString()));
  expect_same(back, parsed);
}

plain::Scalars extreme_scalars(bool low) {
  plain::Scalars s;
  s.flag = !low;
  s.i32 = low ? std::numeric_limits<std::int32_t>::min() : std::numeric_limits<std::int32_t>::max();
  s.i64 = low ? std::numeric_limits<std::int64_t>::min() : std::numeric_limits<std::int64_t>::max();
  s.u32 = low ? 0 : std::numeric_limits<std::uint32_t>::max();
  s.u64 = low ? 0 : std::numeric_limits<std::uint64_t>::max();
  s.s32 = low ? std::numeric_limits<std::int32_t>::min() : std::numeric_limits<std::int32_t>::max();
  s.s64 = low ? std::numeric_limits<std::int64_t>::min() : std::numeric_limits<std::int64_t>::max();
  s.f32 = low ? 1 : std::numeric_limits<std::uint32_t>::max();
  s.f64 = low ? 1 : std::numeric_limits<std::uint64_t>::max();
  s.sf32 = low ? std::numeric_limits<std::int32_t>::min() : -1;
  s.sf64 = low ? std::numeric_limits<std::int64_t>::min() : -1;
  s.fl = low ? -0.0F : std::numeric_limits<float>::infinity();
  s.db = low ? std::numeric_limits<double>::denorm_min() : -std::numeric_limits<double>::max();
  s.color = low ? plain::Color::COLOR_RED : plain::Color::COLOR_BLUE;
  return s;
}

plain::Everything full_value() {
  plain::Everything v;
  v.scalars = extreme_scalars(false);
  v.text = "isotach";
  v.blob = std::string("\0\x01\xff bytes", 9);
  v.r_i32 = {0, -1, std::numeric_limits<std::int32_t>::min(), 42};
  v.r_i64 = {std::numeric_limits<std::int64_t>::max(), -7};
  v.r_u32 = {1, 2, 3};
  v.r_u64 = {std::numeric_limits<std::uint64_t>::max()};
  v.r_fl = {1.5F, -2.25F};
  v.r_db = {3.0, -0.5, 1e300};
  v.r_bool = {1, 0, 1};
  v.r_color = {plain::Color::COLOR_BLUE, plain::Color::COLOR_UNSPECIFIED};
  v.r_text = {"a", "", "ccc"};
  v.r_blob = {std::string(1, '\0'), "xy"};
  v.inner = {.label = "inner", .values = {-5, 5}, .where = {.x = 1, .y = -1}};
  v.r_inner = {{.label = "one", .values = {}, .where = {.x = 2, .y = 3}},
               {.label = "", .values = {9, 8, 7}, .where = {}}};
  v.r_point = {{.x = 1, .y = 2}, {.x = -3, .y = -4}};
  v.r_padded = {{.wide = -1, .narrow = 2}, {.wide = 3, .narrow = -4}};
  v.r_flagged = {{.value = 1, .on = true, .off = false, .maybe = true}};
  v.r_empty.resize(3);
  v.o_i32 = 0;  // present with the default value: presence must survive
  v.o_db = -2.5;
  v.o_bool = false;
  v.o_color = plain::Color::COLOR_RED;
  v.o_text = "";
  v.o_blob = std::string("\x80\x81", 2);
  v.o_point = plain::Point{.x = 0, .y = 0};
  v.mode = plain::Everything_Mode::MODE_FAST;
  v.done = true;
  return v;
}

TEST(MarshalRoundTrip, EmptyValueTakesOnlyItsFixedRunAndLengths) {
  plain::Everything empty;
  check_round_trip(empty);
  // A message with no fields takes nothing at all: the empty call.
  iso::gather_list list;
  iso::marshal(plain::Empty{}, list);
  EXPECT_EQ(list.entries().size(), 0U);
  EXPECT_EQ(list.bytes(), 0U);
  plain::Empty back;
  EXPECT_TRUE(iso::unmarshal({}, back).ok());
}

TEST(MarshalRoundTrip, EveryFieldKindMatchesProtobuf) { check_round_trip(full_value()); }

TEST(MarshalRoundTrip, ExtremeScalarsOfEveryWidthMatchProtobuf) {
  for (bool low : {true, false}) {
    plain::Everything v;
    v.scalars = extreme_scalars(low);
    v.r_fl = {std::numeric_limits<float>::lowest(), std::numeric_limits<float>::denorm_min()};
    check_round_trip(v);
  }
}

TEST(MarshalRoundTrip, LargeSizesMatchProtobuf) {
  plain::Everything v;
  v.text.assign(std::size_t{1} << 20, 'x');
  v.r_i32.resize(std::size_t{1} << 18);
  for (std::size_t i = 0; i < v.r_i32.size(); ++i) v.r_i32[i] = static_cast<std::int32_t>(i * 7919);
  v.r_text.assign(5000, "element");
  v.r_inner.resize(2000);
  for (std::size_t i = 0; i < v.r_inner.size(); ++i) {
    v.r_inner[i].label = std::to_string(i);
    v.r_inner[i].values.assign(i % 5, static_cast<std::int32_t>(i));
  }
  v.r_point.resize(100000, plain::Point{.x = 4, .y = 5});
  check_round_trip(v);
}

TEST(MarshalRoundTrip, OptionalsAbsentAndPresentAreKeptApart) {
  plain::Everything v;
  v.o_text = "";
  check_round_trip(v);
  v.o_text.reset();
  v.o_i32 = 7;
  check_round_trip(v);
}

// --- The gather list points into the value ----------------------------------------------------

TEST(MarshalGather, RepeatedScalarsAreOneEntryPointingIntoTheVector) {
  plain::IntArray a;
  a.values.assign(256, 3);  // 1 KiB
  iso::gather_list list;
  iso::marshal(a, list);
  ASSERT_EQ(list.entries().size(), 2U);  // the length block, then the data
  EXPECT_EQ(list.entries()[1].data, a.values.data());
  EXPECT_EQ(list.entries()[1].size, 1024U);
  EXPECT_EQ(list.bytes(), 8U + 1024U);
}

TEST(MarshalGather, FixedRunIsOneEntryAtTheStructItself) {
  plain::Scalars s = extreme_scalars(false);
  iso::gather_list list;
  iso::marshal(s, list);
  ASSERT_EQ(list.entries().size(), 1U);
  EXPECT_EQ(list.entries()[0].data, static_cast<const void*>(&s));
  // Every scalar width once: 6 of 8 bytes, 7 of 4, one bool.
  EXPECT_EQ(list.entries()[0].size, 6U * 8 + 7U * 4 + 1);
}

TEST(MarshalGather, StringsAreEntriesIntoTheirOwnStorage) {
  plain::Counter c{.value = 5, .owner = "node 3"};
  iso::gather_list list;
  iso::marshal(c, list);
  ASSERT_EQ(list.entries().size(), 3U);  // fixed run, length block, the string
  EXPECT_EQ(list.entries()[2].data, c.owner.data());
}

TEST(MarshalGather, ArrayOfFixedRecordsIsOneEntryWhenItsStructHasNoPadding) {
  plain::Everything v;
  v.r_point.resize(10);
  v.r_padded.resize(10);
  iso::gather_list list;
  iso::marshal(v, list);
  int point_entries = 0;
  int padded_entries = 0;
  for (const iso::gather_entry& e : list.entries()) {
    point_entries += e.data == v.r_point.data() && e.size == 10 * sizeof(plain::Point) ? 1 : 0;
    for (const plain::Padded& p : v.r_padded) padded_entries += e.data == &p ? 1 : 0;
  }
  EXPECT_EQ(point_entries, 1);
  EXPECT_EQ(padded_entries, 10);  // 12 bytes of a 16-byte struct: one entry each
}

TEST(MarshalGather, AReusedListStillMatchesANewValue) {
  iso::gather_list list;
  plain::Everything big = full_value();
  iso::marshal(big, list);
  plain::Counter small{.value = -1, .owner = "x"};
  iso::marshal(small, list);
  EXPECT_EQ(list.entries().size(), 3U);
  plain::Counter back;
  ASSERT_TRUE(iso::unmarshal(list.flatten(), back).ok());
  EXPECT_TRUE(back == small);
}

}  // namespace
