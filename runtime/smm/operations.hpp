// How shared-memory operations (the isotach papers' SREFs) travel: a stream of records,
// one stream per destination per isochron, executed in order at the destination. Every
// stream starts with the issuing isochron's rank (its issue number at the sender), so the
// executed history can be ordered (pulse, pid, rank).
//
//   record = op_header [+ body]
//   read    count variables; body: u32 slot, u32 first index in the slot
//   write   count variables; body: count x u64 values
//   sched   count variables; no body
//   assign  count variables; body: count x u64 values
//   message address = handler id, count = payload bytes; body: payload, padded to 8
//   queued  a message for the isotach receive queue: count = payload bytes; body as message
//   signal  address = channel
//   barrier address = channel, width = barrier mode; body: u64 instance
//   fetch_add, exchange, compare_exchange: atomic read-modify-writes of count variables,
//           sent to every copy like a write; body: rmw_body, then per variable one u64
//           operand (the delta, the new value), or two for compare_exchange (expected,
//           desired). Every copy applies them in the same order, so every copy computes the
//           same values; the copy named by the body's slot answers the old values.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "runtime/smm/byte_buffer.hpp"

namespace iso::runtime {

enum class op_code : std::uint8_t {
  read = 1,
  write = 2,
  sched = 3,
  assign = 4,
  message = 5,
  queued = 6,
  signal = 7,
  barrier = 8,
  fetch_add = 9,
  exchange = 10,
  compare_exchange = 11,
};

[[nodiscard]] constexpr bool is_rmw(op_code code) {
  return code == op_code::fetch_add || code == op_code::exchange ||
         code == op_code::compare_exchange;
}
// Operands per variable of a read-modify-write.
[[nodiscard]] constexpr std::uint32_t rmw_operands(op_code code) {
  return code == op_code::compare_exchange ? 2 : 1;
}
// The value a read-modify-write stores, given the old one (truncated to `width` bytes).
[[nodiscard]] constexpr std::uint64_t rmw_apply(op_code code, std::uint8_t width, std::uint64_t old,
                                                std::uint64_t a, std::uint64_t b) {
  const std::uint64_t mask = width == 4 ? 0xffffffffu : ~std::uint64_t{0};
  switch (code) {
    case op_code::fetch_add:
      return (old + a) & mask;
    case op_code::exchange:
      return a & mask;
    case op_code::compare_exchange:
      return old == (a & mask) ? (b & mask) : old;
    default:
      return old;
  }
}

struct op_header {
  op_code code;
  std::uint8_t width;  // bytes per variable: 4 or 8
  // The operation's position in its isochron, the same at every destination (so that the
  // history orders an isochron's operations identically everywhere).
  std::uint16_t index = 0;
  std::uint32_t count;
  std::uint64_t address;
};
static_assert(sizeof(op_header) == 16);

struct read_body {
  std::uint32_t slot;
  std::uint32_t first;
};

// A read-modify-write's body: where the answering copy sends the old values.
struct rmw_body {
  static constexpr std::uint32_t kNoAnswer = 0xffffffffu;  // the other copies
  std::uint32_t slot;
  std::uint32_t first;
};

struct stream_header {
  std::uint64_t rank;
};

// Appends records to a byte buffer.
class op_writer {
 public:
  explicit op_writer(byte_buffer& out) : out_(out) {}
  template <typename T>
  void put(const T& value) {
    out_.append(&value, sizeof(T));
  }
  void put_bytes(std::span<const std::byte> bytes) {
    out_.append(bytes.data(), bytes.size());
    out_.append_zeros((8 - (bytes.size() & 7)) & 7);
  }

 private:
  byte_buffer& out_;
};

// Reads records back; every read is bounds-checked because remote streams are input.
class op_reader {
 public:
  explicit op_reader(std::span<const std::byte> in) : in_(in) {}
  template <typename T>
  bool get(T& value) {
    if (in_.size() - at_ < sizeof(T) || at_ > in_.size()) return false;
    std::memcpy(&value, in_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return true;
  }
  bool get_bytes(std::size_t n, std::span<const std::byte>& out) {
    const std::size_t padded = n + ((8 - (n & 7)) & 7);
    if (in_.size() - at_ < padded) return false;
    out = in_.subspan(at_, n);
    at_ += padded;
    return true;
  }
  [[nodiscard]] bool done() const { return at_ >= in_.size(); }

 private:
  std::span<const std::byte> in_;
  std::size_t at_ = 0;
};

}  // namespace iso::runtime
