// Marshaling of the plain C++ types that protoc-gen-iso generates from a .proto file: a value
// is sent as a gather list of pointers into it (nothing is copied), and received by
// unmarshaling bytes straight into freshly sized storage. The wire layout is described in
// compiler-support/README.md; it is not protobuf's.
//
//   demo::plain::Record r{.id = 7, .name = "seven"};
//   iso::gather_list list;                  // reuse it: it only grows
//   iso::marshal(r, list);                  // list.entries() point into r
//   std::vector<std::byte> bytes = list.flatten();
//   demo::plain::Record back;
//   absl::Status s = iso::unmarshal(bytes, back);   // back == r when s.ok()
//
// For every message type M the generated code provides three functions, found by
// argument-dependent lookup (Orca's per-type marshaling triple):
//   iso::gather_size iso_gather_size(const M&);          how much a gather list needs
//   void iso_gather(const M&, iso::gather_list&);        appends M's entries
//   absl::Status iso_unmarshal(iso::unmarshal_reader&, M&);   reads one M
// marshal() and unmarshal() below are the usual way to call them.
//
// Thread safety: a gather_list or unmarshal_reader is used by one thread at a time; marshal()
// only reads the value, which must not change while the list is in use. Nothing here blocks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace iso {

// One run of bytes to send, borrowed from the value being marshaled (or from the list's own
// table of lengths).
struct gather_entry {
  const void* data = nullptr;
  std::size_t size = 0;
};

// What marshaling a value needs: gather entries, length words, and bytes on the wire.
struct gather_size {
  std::size_t entries = 0;
  std::size_t lengths = 0;
  std::size_t bytes = 0;

  // A run of `n` bytes (no entry when empty).
  void add_bytes(std::size_t n) noexcept {
    entries += n != 0 ? 1 : 0;
    bytes += n;
  }
  // A block of `n` length words, sent as one entry.
  void add_lengths(std::size_t n) noexcept {
    entries += n != 0 ? 1 : 0;
    lengths += n;
    bytes += n * sizeof(std::uint64_t);
  }
  gather_size& operator+=(const gather_size& other) noexcept {
    entries += other.entries;
    lengths += other.lengths;
    bytes += other.bytes;
    return *this;
  }
};

// The gather list of one value: entries pointing into the value, plus the table of lengths
// the entries also point into. The storage only grows, so a list kept for reuse stops
// allocating. The entries stay valid until the next reset() and while the value lives
// unchanged. Moving a list keeps its entries valid; copying is not allowed.
class gather_list {
 public:
  gather_list() = default;
  gather_list(const gather_list&) = delete;
  gather_list& operator=(const gather_list&) = delete;
  gather_list(gather_list&&) noexcept = default;
  gather_list& operator=(gather_list&&) noexcept = default;
  ~gather_list() = default;

  // Empties the list and makes room for `need` (from iso_gather_size of the value).
  void reset(const gather_size& need) {
    if (entries_.size() < need.entries) entries_.resize(need.entries);
    if (lengths_.size() < need.lengths) lengths_.resize(need.lengths);
    entry_count_ = 0;
    length_count_ = 0;
    bytes_ = 0;
  }

  // Appends a run; an empty one adds nothing. Precondition: room left (reset() sized it).
  void add(const void* data, std::size_t size) noexcept {
    if (size == 0) return;
    if (entry_count_ == entries_.size()) overflow();
    entries_[entry_count_++] = gather_entry{data, size};
    bytes_ += size;
  }

  // Takes `n` length words, appends them as one entry and returns where to write them.
  [[nodiscard]] std::uint64_t* lengths(std::size_t n) noexcept {
    if (lengths_.size() - length_count_ < n) overflow();
    std::uint64_t* at = lengths_.data() + length_count_;
    length_count_ += n;
    add(at, n * sizeof(std::uint64_t));
    return at;
  }

  [[nodiscard]] std::span<const gather_entry> entries() const noexcept {
    return {entries_.data(), entry_count_};
  }
  // The bytes the entries add up to.
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }

  // Copies the entries, in order, to `to`, which must hold bytes(); returns the end.
  std::byte* copy_to(std::byte* to) const noexcept {
    for (const gather_entry& e : entries()) {
      std::memcpy(to, e.data, e.size);
      to += e.size;
    }
    return to;
  }
  // The entries as one contiguous buffer (what a transport without gather sends).
  [[nodiscard]] std::vector<std::byte> flatten() const {
    std::vector<std::byte> out(bytes_);
    copy_to(out.data());
    return out;
  }

 private:
  // A generated iso_gather wrote more than its iso_gather_size announced: a bug in the
  // generator, never a consequence of the value.
  [[noreturn]] static void overflow() noexcept { std::abort(); }

  std::vector<gather_entry> entries_;
  std::vector<std::uint64_t> lengths_;
  std::size_t entry_count_ = 0;
  std::size_t length_count_ = 0;
  std::size_t bytes_ = 0;
};

// Reads a marshaled value from a byte buffer, never past its end. Each reading call returns
// InvalidArgument naming `what` (the field's full name), the offset and the sizes when the
// bytes are too few or a value is malformed; the buffer is borrowed and must outlive the
// reader.
class unmarshal_reader {
 public:
  // Repeated fields whose elements may take no bytes on the wire (empty messages) are
  // limited to this many elements, so that a short malformed buffer cannot ask for an
  // unbounded allocation.
  static constexpr std::uint64_t max_empty_elements = std::uint64_t{1} << 20;

  explicit unmarshal_reader(std::span<const std::byte> bytes) noexcept : bytes_(bytes) {}

  [[nodiscard]] std::size_t offset() const noexcept { return offset_; }
  [[nodiscard]] std::size_t remaining() const noexcept { return bytes_.size() - offset_; }

  // Takes the next `n` bytes: `at` points to them.
  [[nodiscard]] absl::Status take(std::uint64_t n, std::string_view what, const std::byte*& at) {
    if (n > remaining()) return truncated(what, n);
    at = bytes_.data() + offset_;
    offset_ += static_cast<std::size_t>(n);
    return absl::OkStatus();
  }

  // Takes `count` elements of `size` bytes each, without overflow on a huge count.
  [[nodiscard]] absl::Status take_array(std::uint64_t count, std::size_t size,
                                        std::string_view what, const std::byte*& at) {
    if (size != 0 && count > remaining() / size) return too_many(what, count, size);
    return take(count * size, what, at);
  }

  // Reads `size` bytes into `out`, resized to them.
  [[nodiscard]] absl::Status read_string(std::uint64_t size, std::string& out,
                                         std::string_view what) {
    const std::byte* at = nullptr;
    if (absl::Status s = take(size, what, at); !s.ok()) return s;
    out.resize(static_cast<std::size_t>(size));
    if (size != 0) std::memcpy(out.data(), at, out.size());
    return absl::OkStatus();
  }

  // Reads `count` trivially copyable elements into `out`, resized to them.
  template <class T>
  [[nodiscard]] absl::Status read_vector(std::uint64_t count, std::vector<T>& out,
                                         std::string_view what) {
    static_assert(std::is_trivially_copyable_v<T>);
    const std::byte* at = nullptr;
    if (absl::Status s = take_array(count, sizeof(T), what, at); !s.ok()) return s;
    out.resize(static_cast<std::size_t>(count));
    if (count != 0) std::memcpy(out.data(), at, out.size() * sizeof(T));
    return absl::OkStatus();
  }

  // Checks that `count` elements of at least `min_size` wire bytes each can be in what is
  // left (or, for elements that may take none, that count is within max_empty_elements).
  [[nodiscard]] absl::Status check_count(std::uint64_t count, std::size_t min_size,
                                         std::string_view what) const {
    if (min_size == 0) {
      if (count <= max_empty_elements) return absl::OkStatus();
      return absl::InvalidArgumentError(absl::StrCat(
          "unmarshal: ", view(what), " claims ", count, " elements at offset ", offset_,
          ", more than the ", max_empty_elements, " allowed for elements that may be empty"));
    }
    if (count > remaining() / min_size) return too_many(what, count, min_size);
    return absl::OkStatus();
  }

  // A malformed value at the current offset: `why` says what is wrong with it.
  [[nodiscard]] absl::Status malformed(std::string_view what, std::string_view why) const {
    return absl::InvalidArgumentError(absl::StrCat("unmarshal: malformed ", view(what),
                                                   " before offset ", offset_, ": ", view(why)));
  }

  // OK when every byte was read; `type` names the value that should have ended here.
  [[nodiscard]] absl::Status finish(std::string_view type) const {
    if (remaining() == 0) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat("unmarshal: ", remaining(),
                                                   " bytes left over after ", view(type),
                                                   " at offset ", offset_, " of ", bytes_.size()));
  }

 private:
  // Debian's Abseil has its own string_view, which StrCat takes.
  static absl::string_view view(std::string_view s) noexcept { return {s.data(), s.size()}; }

  [[nodiscard]] absl::Status truncated(std::string_view what, std::uint64_t n) const {
    return absl::InvalidArgumentError(absl::StrCat("unmarshal: truncated input: ", view(what),
                                                   " needs ", n, " bytes at offset ", offset_,
                                                   ", only ", remaining(), " left"));
  }
  [[nodiscard]] absl::Status too_many(std::string_view what, std::uint64_t count,
                                      std::size_t size) const {
    return absl::InvalidArgumentError(absl::StrCat(
        "unmarshal: truncated input: ", view(what), " claims ", count, " elements of at least ",
        size, " bytes at offset ", offset_, ", only ", remaining(), " bytes left"));
  }

  std::span<const std::byte> bytes_;
  std::size_t offset_ = 0;
};

// Fills `list` with the gather entries of `value` (a generated type).
template <class T>
void marshal(const T& value, gather_list& list) {
  list.reset(iso_gather_size(value));
  iso_gather(value, list);
}

// Unmarshals all of `bytes` into `out` (a generated type). On error `out` is left as it was
// and the status (InvalidArgument) names the field, the offset and what was wrong; bytes
// left over after the value are an error too.
template <class T>
[[nodiscard]] absl::Status unmarshal(std::span<const std::byte> bytes, T& out) {
  unmarshal_reader in(bytes);
  T value{};
  if (absl::Status s = iso_unmarshal(in, value); !s.ok()) return s;
  if (absl::Status s = in.finish(iso_type_name(value)); !s.ok()) return s;
  out = std::move(value);
  return absl::OkStatus();
}

}  // namespace iso
