// Isotach shared memory: typed shared variables and arrays, where they live, and the
// handles that read results arrive in.
//
//   iso::shared_array<std::int64_t> counters = node.allocate<std::int64_t>(16);
//   {
//     iso::isochron iso(node);                 // operations below take effect atomically
//     iso::value<std::int64_t> old = iso.read(counters[3]);
//     iso.write(counters[4], 42);
//   }                                          // issued here; nothing blocks yet
//   std::int64_t v = old.get();                // blocks only now, until the value is here
//
// Variables are 32 or 64 bits wide: std::int32_t, std::uint32_t, float (32-bit pages) and
// std::int64_t, std::uint64_t, double (64-bit pages).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "iso/error.hpp"

namespace iso {

class node;
class isochron;
using node_id = std::uint32_t;
// A variable's place in isotach memory; consecutive variables of an allocation have
// consecutive addresses.
using address = std::uint64_t;

template <typename T>
concept shared_scalar = std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::uint32_t> ||
    std::is_same_v<T, float> || std::is_same_v<T, std::int64_t> ||
    std::is_same_v<T, std::uint64_t> || std::is_same_v<T, double>;

// Where the pages of an allocation live. Placement changes performance, never semantics.
class placement {
 public:
  // A copy on every node: reads are local, changes go to all.
  static placement everywhere();
  // One copy, on `node`.
  static placement on(node_id node);
  // A copy on each of `nodes`.
  static placement on(std::vector<node_id> nodes);
  // Page p on node p mod count(): spreads the data, one copy of each page.
  static placement spread();
  // Page p (counting from the allocation's first page) on the nodes `rule(p)` names.
  static placement per_page(std::function<std::vector<node_id>(std::uint64_t page)> rule);

  // The copyset of page `page` in a job of `nodes` nodes.
  [[nodiscard]] std::vector<node_id> copyset(std::uint64_t page, std::uint32_t nodes) const;

 private:
  placement() = default;
  std::function<std::vector<node_id>(std::uint64_t, std::uint32_t)> rule_;
};

namespace detail {
// Bit-exact conversion between a shared scalar and the 64-bit word it travels in.
template <shared_scalar T>
constexpr std::uint64_t to_bits(T value) {
  if constexpr (sizeof(T) == 4) {
    return std::bit_cast<std::uint32_t>(value);
  } else {
    return std::bit_cast<std::uint64_t>(value);
  }
}
template <shared_scalar T>
constexpr T from_bits(std::uint64_t bits) {
  if constexpr (sizeof(T) == 4) {
    return std::bit_cast<T>(static_cast<std::uint32_t>(bits));
  } else {
    return std::bit_cast<T>(bits);
  }
}

class node_state;
// What a read handle knows of its node: the node's insides, while the node exists. The
// node and the handles of its reads share one (on the node's thread, as everything of a
// node); the node clears `owner` when it goes, and whichever of them goes last frees it.
// So a handle that outlives its node is still safe to use (an error) and to destroy.
struct node_link {
  node_state* owner = nullptr;
  std::size_t handles = 0;
};

// The runtime side of a read handle (a slot in the node's read table).
struct read_ticket {
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;
  std::uint64_t isochron = 0;  // the serial of the isochron that issued the read
};
// Both throw iso::error (failed_precondition) for a handle without a read (`link` null), a
// node that no longer exists, and a read whose isochron is still open; wait also when the
// job fails.
bool read_ready(node_link* link, read_ticket t);
std::span<const std::uint64_t> read_wait(node_link* link, read_ticket t);
// A buffer of `given` values for a block read of `read`: invalid_argument.
[[noreturn]] inline void throw_size_mismatch(std::size_t given, std::size_t read) {
  throw error(error_code::invalid_argument, "block_value::get: a buffer of " +
                                                std::to_string(given) + " values for a read of " +
                                                std::to_string(read));
}
// Gives the slot back (if the node still exists) and lets go of `link`.
void read_release(node_link* link, read_ticket t) noexcept;

// Move-only ownership of a read slot.
class read_handle {
 public:
  read_handle() = default;
  read_handle(node_link* link, read_ticket t) : link_(link), ticket_(t) { ++link_->handles; }
  read_handle(read_handle&& other) noexcept
      : link_(std::exchange(other.link_, nullptr)), ticket_(other.ticket_) {}
  read_handle& operator=(read_handle&& other) noexcept {
    if (this != &other) {
      reset();
      link_ = std::exchange(other.link_, nullptr);
      ticket_ = other.ticket_;
    }
    return *this;
  }
  read_handle(const read_handle&) = delete;
  read_handle& operator=(const read_handle&) = delete;
  ~read_handle() { reset(); }

  [[nodiscard]] bool valid() const { return link_ != nullptr; }
  [[nodiscard]] bool ready() const { return read_ready(link_, ticket_); }
  [[nodiscard]] std::span<const std::uint64_t> wait() const { return read_wait(link_, ticket_); }

 private:
  void reset() noexcept {
    if (link_ != nullptr) read_release(std::exchange(link_, nullptr), ticket_);
  }
  node_link* link_ = nullptr;
  read_ticket ticket_;
};
}  // namespace detail

// One shared variable. A cheap value type: copy it freely.
template <shared_scalar T>
class shared_var {
 public:
  shared_var() = default;
  explicit shared_var(address a) : address_(a) {}
  [[nodiscard]] address where() const { return address_; }

 private:
  address address_ = 0;
};

// A contiguous run of shared variables from one allocation.
template <shared_scalar T>
class shared_array {
 public:
  shared_array() = default;
  shared_array(address first, std::size_t size) : first_(first), size_(size) {}
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] address first() const { return first_; }
  // No bounds check here: an address outside isotach memory is reported when used.
  [[nodiscard]] shared_var<T> operator[](std::size_t i) const { return shared_var<T>(first_ + i); }

 private:
  address first_ = 0;
  std::size_t size_ = 0;
};

// The result of a read, available once the isochron has executed. Move-only: the slot its
// value arrives in belongs to it. Dropping it before get() is allowed, and so is keeping
// it longer than its node (destroying it then is harmless; using it is an error). Used on
// its node's thread, as the node is.
template <shared_scalar T>
class [[nodiscard]] value {
 public:
  // Holds no read: get() and ready() throw until a read is moved in.
  value() = default;
  // Blocks (making progress: this node keeps serving others) until the value is here.
  // Throws iso::error: failed_precondition when this value holds no read (default-
  // constructed or moved from), when its node no longer exists, when the read's own
  // isochron is still open (its value cannot arrive before end()), or when the read waits,
  // in this node's own copy, for the assign of a sched this node made before it and has not
  // assigned yet (and no other fiber of the node could: assign first, then get() works);
  // aborted or deadline_exceeded when the job fails meanwhile.
  [[nodiscard]] T get() const { return detail::from_bits<T>(handle_.wait()[0]); }
  // True once get() would not block. Never blocks; false while the read's isochron is
  // open. Throws iso::error (failed_precondition) as get() does for a value without a read
  // or without a node.
  [[nodiscard]] bool ready() const { return handle_.ready(); }

 private:
  friend class isochron;
  friend class node;  // node::fetch_add
  explicit value(detail::read_handle h) : handle_(std::move(h)) {}
  detail::read_handle handle_;
};

// The result of a block read over `count` consecutive variables. The same rules as value.
template <shared_scalar T>
class [[nodiscard]] block_value {
 public:
  block_value() = default;
  // Blocks until every value is here. Throws iso::error as value::get().
  [[nodiscard]] std::vector<T> get() const {
    std::span<const std::uint64_t> bits = handle_.wait();
    std::vector<T> out(bits.size());
    for (std::size_t i = 0; i < bits.size(); ++i) out[i] = detail::from_bits<T>(bits[i]);
    return out;
  }
  // Blocks until every value is here, then stores them in `out`, which must hold exactly
  // as many values as were read (invalid_argument otherwise). Saves the vector that get()
  // allocates, for a program that reads large blocks into buffers of its own.
  void get(std::span<T> out) const {
    std::span<const std::uint64_t> bits = handle_.wait();
    if (out.size() != bits.size()) detail::throw_size_mismatch(out.size(), bits.size());
    for (std::size_t i = 0; i < bits.size(); ++i) out[i] = detail::from_bits<T>(bits[i]);
  }
  [[nodiscard]] bool ready() const { return handle_.ready(); }

 private:
  friend class isochron;
  explicit block_value(detail::read_handle h) : handle_(std::move(h)) {}
  detail::read_handle handle_;
};

}  // namespace iso
