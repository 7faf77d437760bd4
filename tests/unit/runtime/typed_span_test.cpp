// Typed object operations whose last argument is a std::span of a run-time length and whose
// result may be a std::vector (iso/object.hpp, typed_object): round trips on two in-process
// nodes for a replica and for a single copy on the other node, an empty span, a guard that
// looks at the span, argument bytes that are not whole elements or that the operation's
// check refuses (refused, nothing applied), results of the wrong size, and the bytes of a
// fixed-size call, which did not change.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "iso/iso.hpp"
#include "tests/support/inproc_job.hpp"
#include "tests/support/object_test_params.hpp"
#include "tests/support/test_support.hpp"

namespace {

using iso::error_code;
using iso::object_placement;
using iso::test::expect_error;
using iso::test::run_inproc;

constexpr iso::operation_id kPut = 0, kRow = 1, kFind = 2, kSum = 3, kLength = 4, kAligned = 5,
                            kRows = 6, kReversed = 7;
constexpr std::uint64_t kRowsAtMost = 1000;
constexpr std::uint64_t kNotFound = std::numeric_limits<std::uint64_t>::max();

// Rows of 32-bit values by number, and the total of every sum() call.
struct rows_state {
  std::map<std::uint64_t, std::vector<std::int32_t>> rows;
  std::int64_t total = 0;
};

struct alignment_report {
  double sum = 0;
  std::uint64_t misaligned_by = 0;  // the span's address modulo alignof(double)
};

using find_guard = bool (*)(const rows_state&, std::span<const std::int32_t>);
using find_body = std::uint64_t (*)(const rows_state&, std::span<const std::int32_t>);
using row_guard = bool (*)(const rows_state&, std::uint64_t);
using row_body = std::span<const std::int32_t> (*)(const rows_state&, std::uint64_t);

std::uint64_t key_of(const rows_state& s, std::span<const std::int32_t> want) {
  for (const auto& [k, row] : s.rows) {
    if (std::equal(row.begin(), row.end(), want.begin(), want.end())) return k;
  }
  return kNotFound;
}

iso::object_type make_rows_type() {
  return iso::typed_object<rows_state>("Rows")
      .write(
          kPut, "put",
          [](rows_state& s, std::uint64_t k, std::span<const std::int32_t> row) noexcept {
            s.rows[k].assign(row.begin(), row.end());
          },
          // Refused before anything is sent: the body need not look (and cannot throw).
          [](std::uint64_t k, std::span<const std::int32_t>) {
            if (k >= kRowsAtMost) {
              throw iso::error(error_code::invalid_argument, "put: row " + std::to_string(k) +
                                                                 " is beyond the last row " +
                                                                 std::to_string(kRowsAtMost - 1));
            }
          })
      // Waits until row k is there; the body's span into the state becomes the result.
      .read(kRow, "row",
            std::vector<std::pair<row_guard, row_body>>{
                {[](const rows_state& s, std::uint64_t k) { return s.rows.contains(k); },
                 [](const rows_state& s, std::uint64_t k) {
                   return std::span<const std::int32_t>(s.rows.at(k));
                 }}})
      .read(kReversed, "reversed",
            [](const rows_state& s, std::uint64_t k) {
              const std::vector<std::int32_t>& row = s.rows.at(k);
              return std::vector<std::int32_t>(row.rbegin(), row.rend());
            })
      // Waits until some row equals the argument; its number.
      .read(kFind, "find",
            std::vector<std::pair<find_guard, find_body>>{
                {[](const rows_state& s, std::span<const std::int32_t> want) {
                   return key_of(s, want) != kNotFound;
                 },
                 [](const rows_state& s, std::span<const std::int32_t> want) {
                   return key_of(s, want);
                 }}})
      .write(kSum, "sum",
             [](rows_state& s, std::span<const std::int64_t> values) {
               std::int64_t sum = 0;
               for (std::int64_t v : values) sum += v;
               s.total += sum;
               return s.total;
             })
      .read(kLength, "length",
            [](const rows_state& s, std::uint64_t k) -> std::uint64_t {
              const auto at = s.rows.find(k);
              return at == s.rows.end() ? kNotFound : at->second.size();
            })
      // One byte before the doubles: they are not aligned in the argument bytes.
      .read(kAligned, "aligned",
            [](const rows_state&, std::uint8_t, std::span<const double> values) {
              alignment_report r;
              for (double v : values) r.sum += v;
              r.misaligned_by = reinterpret_cast<std::uintptr_t>(values.data()) % alignof(double);
              return r;
            })
      .read(kRows, "rows",
            [](const rows_state& s) { return static_cast<std::uint64_t>(s.rows.size()); })
      .type();
}

// put's argument bytes as a typed call makes them (row number k, then 32-bit elements), with
// `extra` bytes after the row number.
std::vector<std::byte> bytes_of(std::uint64_t k, std::size_t extra) {
  const iso::detail::elements_header header = iso::detail::elements_header_for<std::int32_t>(8);
  std::vector<std::byte> bytes(sizeof header + sizeof k + extra, std::byte{1});
  std::memcpy(bytes.data(), &header, sizeof header);
  std::memcpy(bytes.data() + sizeof header, &k, sizeof k);
  return bytes;
}

// A replica on each node, and a single copy on node 1 (node 0's calls cross to it), under
// both objects orders.
class TypedSpans : public iso::test::placement_order_test {
 protected:
  [[nodiscard]] iso::object_options placed() const {
    return {.placement = placement(), .owner = 1, .initial = {}};
  }
};

INSTANTIATE_TEST_SUITE_P(PlacementsAndOrders, TypedSpans,
                         testing::Combine(testing::Values(object_placement::replicated,
                                                          object_placement::single_copy),
                                          iso::test::both_object_orders()),
                         iso::test::placement_order_name);

TEST_P(TypedSpans, RowsRoundTripThroughSpanArgumentsAndVectorResults) {
  const iso::object_type type = make_rows_type();
  std::mutex mu;
  std::map<iso::node_id, std::vector<std::vector<std::int32_t>>> seen;
  const int status = run_inproc(2, opts(), [&](iso::node& node) {
    iso::object rows(node, type, placed());
    const std::vector<std::int32_t> decoy{7};
    if (node.id() == 0) {
      const std::vector<std::int32_t> first{1, -2, 3};
      rows.call<void>(kPut, std::uint64_t{1}, std::span<const std::int32_t>(first));
      rows.call<void>(kPut, std::uint64_t{2}, std::span<const std::int32_t>{});  // empty
      rows.call<void>(kPut, std::uint64_t{5}, decoy);  // a vector binds to the span
    } else {
      std::vector<std::int32_t> long_row(1000);
      for (std::size_t i = 0; i < long_row.size(); ++i) {
        long_row[i] = static_cast<std::int32_t>(i * i);
      }
      rows.call<void>(kPut, std::uint64_t{3}, std::span(long_row));  // a span of non-const
      rows.call<void>(kPut, std::uint64_t{4}, std::vector<std::int32_t>{7, 8});
    }
    // The guard compares the argument's elements with each row: {7, 8} is row 4, not the
    // decoy {7} (row 5), nor any other row with a 7 in front.
    const std::vector<std::int32_t> want{7, 8};
    EXPECT_EQ(rows.read<std::uint64_t>(kFind, want), 4u);
    EXPECT_EQ(rows.read<std::uint64_t>(kFind, decoy), 5u);

    std::vector<std::vector<std::int32_t>> got;
    got.push_back(rows.read<std::vector<std::int32_t>>(kRow, std::uint64_t{1}));
    got.push_back(rows.read<std::vector<std::int32_t>>(kRow, std::uint64_t{2}));
    // A started read decodes its vector when taken.
    iso::pending<std::vector<std::int32_t>> third =
        rows.start<std::vector<std::int32_t>>(kRow, std::uint64_t{3});
    got.push_back(third.get());
    std::vector<std::int32_t> into(2, -1);
    rows.read_into(kRow, std::span(into), std::uint64_t{4});
    got.push_back(into);
    EXPECT_EQ(rows.read<std::vector<std::int32_t>>(kReversed, std::uint64_t{1}),
              (std::vector<std::int32_t>{3, -2, 1}));
    EXPECT_EQ(rows.read<std::uint64_t>(kLength, std::uint64_t{2}), 0u);

    // A span as the only argument, through a write (to the owner, for a single copy).
    const std::int64_t values[] = {10, 20, 30};
    const auto total = rows.call<std::int64_t>(kSum, std::span<const std::int64_t>(values));
    EXPECT_TRUE(total == 60 || total == 120) << total;
    const auto none = rows.call<std::int64_t>(kSum, std::span<const std::int64_t>{});
    EXPECT_TRUE(none == 60 || none == 120) << none;

    // The doubles follow one byte of fixed arguments; the body gets them aligned.
    const std::vector<double> halves{0.5, 1.5, 2.5};
    const auto aligned = rows.read<alignment_report>(kAligned, std::uint8_t{9}, halves);
    EXPECT_EQ(aligned.sum, 4.5);
    EXPECT_EQ(aligned.misaligned_by, 0u);

    std::lock_guard lock(mu);
    seen[node.id()] = std::move(got);
  });
  EXPECT_EQ(status, 0);
  std::vector<std::int32_t> squares(1000);
  for (std::size_t i = 0; i < squares.size(); ++i) squares[i] = static_cast<std::int32_t>(i * i);
  const std::vector<std::vector<std::int32_t>> want{{1, -2, 3}, {}, squares, {7, 8}};
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], want);
  EXPECT_EQ(seen[1], want);
}

TEST_P(TypedSpans, BadElementBytesAndWrongResultSizesAreRefused) {
  const iso::object_type type = make_rows_type();
  const int status = run_inproc(2, opts(), [&](iso::node& node) {
    iso::object rows(node, type, placed());
    if (node.id() == 0) rows.call<void>(kPut, std::uint64_t{1}, std::vector<std::int32_t>{1, 2, 3});
    (void)rows.read<std::vector<std::int32_t>>(kRow, std::uint64_t{1});
    node.barrier();

    // Six bytes after the row number: one and a half 32-bit elements.
    expect_error(error_code::invalid_argument,
                 "operation 0 (put): arguments of 22 bytes: put takes 8 bytes of fixed-size "
                 "arguments and then whole elements of 4 bytes, not 14 bytes",
                 [&] { rows.invoke(kPut, bytes_of(7, 6)); });
    // Arguments the operation's check refuses.
    expect_error(error_code::invalid_argument,
                 "operation 0 (put): arguments of 20 bytes: put: row 5000 is beyond the last row "
                 "999",
                 [&] { rows.call<void>(kPut, std::uint64_t{5000}, std::vector<std::int32_t>{1}); });
    // Bytes that are no run of elements at all.
    expect_error(error_code::invalid_argument,
                 "put takes 8 bytes of fixed-size arguments and then elements of 4 bytes, but "
                 "the call gave no run of elements",
                 [&] { rows.invoke(kPut, std::vector<std::byte>(5)); });
    // Arguments of other types than the operation's are refused on the caller, naming
    // both lists, whether their bytes would be of other sizes (a row number as a 32-bit
    // int, elements of 64 bits) or of the same sizes and so read as other values (a signed
    // row number, float elements, a double where a count goes).
    expect_error(error_code::invalid_argument,
                 "(Rows), operation 0 (put) takes (unsigned long, std::span<int const>); "
                 "the call passes (int, std::span<int const>)",
                 [&] {
                   rows.call<void>(kPut, 2, std::vector<std::int32_t>{1, 2, 3});
                 });
    expect_error(error_code::invalid_argument,
                 "takes (unsigned long, std::span<int const>); the call passes (unsigned long, "
                 "std::span<long const>)",
                 [&] { rows.call<void>(kPut, std::uint64_t{2}, std::vector<std::int64_t>{1}); });
    expect_error(error_code::invalid_argument,
                 "takes (unsigned long, std::span<int const>); the call passes (long, "
                 "std::span<int const>)",
                 [&] { rows.call<void>(kPut, std::int64_t{8}, std::vector<std::int32_t>{1}); });
    expect_error(error_code::invalid_argument,
                 "takes (unsigned long, std::span<int const>); the call passes (unsigned long, "
                 "std::span<float const>)",
                 [&] { rows.call<void>(kPut, std::uint64_t{8}, std::vector<float>{1.5F}); });
    // Integers of the operation's size and signedness are its values, whatever their type.
    EXPECT_EQ(rows.read<std::uint64_t>(kLength, 1ULL), 3u);
    EXPECT_EQ(rows.read<std::uint64_t>(kLength, std::size_t{1}), 3u);
    // Where no typed call stands in the way (bytes made by hand, or by another program),
    // the sizes the bytes carry are still checked where they are decoded.
    expect_error(error_code::invalid_argument,
                 "put takes 8 bytes of fixed-size arguments and then elements of 4 bytes, but "
                 "the call gave 8 bytes of them and elements of 8 bytes",
                 [&] {
                   rows.invoke(kPut, iso::detail::encode_arguments(std::uint64_t{2},
                                                                   std::vector<std::int64_t>{1}));
                 });
    expect_error(error_code::invalid_argument,
                 "(Rows), operation 4 (length) takes (unsigned long); the call passes "
                 "(double)",
                 [&] { (void)rows.read<std::uint64_t>(kLength, 1.0); });
    expect_error(error_code::invalid_argument, "operation 1 (row) takes (unsigned long)",
                 [&] { (void)rows.start<std::vector<std::int32_t>>(kRow, std::int64_t{1}); });
    // A row of 32-bit elements read as 64-bit ones.
    expect_error(error_code::invalid_argument,
                 "operation 1: the result is a run of 4-byte elements, where the caller expects "
                 "elements of 8 bytes",
                 [&] { (void)rows.read<std::vector<std::int64_t>>(kRow, std::uint64_t{1}); });
    // A fixed-size result read as elements.
    expect_error(error_code::invalid_argument,
                 "the result is not a run of elements, where the caller expects elements of 8 "
                 "bytes",
                 [&] { (void)rows.read<std::vector<std::uint64_t>>(kRows); });
    std::vector<std::int32_t> two{-1, -1};
    expect_error(error_code::invalid_argument,
                 "operation 1: a result of 12 bytes where the caller expects 8",
                 [&] { rows.read_into(kRow, std::span(two), std::uint64_t{1}); });
    EXPECT_EQ(two, (std::vector<std::int32_t>{-1, -1}));
    node.barrier();

    // Nothing was applied: row 7 is not there and one write only was.
    EXPECT_EQ(rows.read<std::uint64_t>(kRows), 1u);
    EXPECT_EQ(rows.read<std::uint64_t>(kLength, std::uint64_t{7}), kNotFound);
    if (placement() == object_placement::replicated || node.id() == 1) {
      EXPECT_EQ(rows.writes_applied(), 1u) << "node " << node.id();
    }
  });
  EXPECT_EQ(status, 0);
}

// Where the call runs, the same bytes meet the same unmarshal: refused before any body.
TEST(TypedSpanUnmarshal, RefusesBytesThatAreNotWholeElements) {
  const iso::object_type type = make_rows_type();
  const iso::operation* put = type.find(kPut);
  ASSERT_NE(put, nullptr);
  expect_error(error_code::invalid_argument,
               "put takes 8 bytes of fixed-size arguments and then whole elements of 4 bytes, "
               "not 11 bytes",
               [&] { (void)put->unmarshal(bytes_of(1, 3)); });
  expect_error(error_code::invalid_argument, "put: row 1000 is beyond the last row 999",
               [&] { (void)put->unmarshal(bytes_of(1000, 4)); });
  // Whole elements, none of them, are an empty span.
  EXPECT_NO_THROW((void)put->unmarshal(bytes_of(1, 0)));
  EXPECT_NO_THROW((void)put->unmarshal(bytes_of(1, 8)));
}

// A noexcept body spares the copy of the state before each write; others keep it, and so
// does a noexcept write that returns a run of elements (copying them out may fail after the
// body changed the state).
TEST(TypedSpanUnmarshal, ANoexceptBodyNeedsNoCopyOfTheState) {
  const iso::object_type type = make_rows_type();
  EXPECT_FALSE(type.find(kPut)->body_may_throw);
  EXPECT_TRUE(type.find(kSum)->body_may_throw);
  const iso::object_type numbers =
      iso::typed_object<std::vector<std::int32_t>>("Numbers")
          .write(0, "append_all",
                 [](std::vector<std::int32_t>& v, std::int32_t x) noexcept {
                   v.push_back(x);
                   return std::span<const std::int32_t>(v);
                 })
          .write(1, "append",
                 [](std::vector<std::int32_t>& v, std::int32_t x) noexcept {
                   v.push_back(x);
                   return x;
                 })
          .type();
  EXPECT_TRUE(numbers.find(0)->body_may_throw);
  EXPECT_FALSE(numbers.find(1)->body_may_throw);
}

// A fixed-size call's bytes are the arguments' bytes in order, as before spans; a span
// call's are a header naming the shape (17 bytes of fixed-size arguments, 2-byte elements),
// the same bytes, then the elements'.
TEST(TypedSpanEncoding, FixedSizeBytesAreUnchangedAndElementsFollow) {
  const std::int64_t a = -5;
  const std::uint8_t b = 200;
  const double c = 0.25;
  std::vector<std::byte> want(sizeof a + sizeof b + sizeof c);
  std::memcpy(want.data(), &a, sizeof a);
  std::memcpy(want.data() + sizeof a, &b, sizeof b);
  std::memcpy(want.data() + sizeof a + sizeof b, &c, sizeof c);
  EXPECT_EQ(iso::detail::encode_arguments(a, b, c), want);
  EXPECT_TRUE(iso::detail::encode_arguments().empty());

  const std::vector<std::int16_t> elements{1, 2, 3};
  const std::vector<std::byte> header = {std::byte{0xE5}, std::byte{0xE1}, std::byte{2},
                                         std::byte{0},    std::byte{17},   std::byte{0},
                                         std::byte{0},    std::byte{0}};
  std::vector<std::byte> empty = header;
  empty.insert(empty.end(), want.begin(), want.end());
  std::vector<std::byte> with = empty;
  with.resize(empty.size() + sizeof(std::int16_t) * elements.size());
  std::memcpy(with.data() + empty.size(), elements.data(), sizeof(std::int16_t) * elements.size());
  EXPECT_EQ(iso::detail::encode_arguments(a, b, c, elements), with);
  EXPECT_EQ(iso::detail::encode_arguments(a, b, c, std::span(elements)), with);
  EXPECT_EQ(iso::detail::encode_arguments(a, b, c, std::span<const std::int16_t>{}), empty);
}

}  // namespace
