// An isochron: a group of shared-memory operations and isochronous messages from one node
// that take effect atomically, at one logical time everywhere. All isochrons of all nodes
// execute in one global order that respects each node's issue order, so the whole history
// is sequentially consistent.
//
//   {
//     iso::isochron iso(node);
//     iso::value<double> a = iso.read(x);        // non-blocking: a handle
//     iso.sched(lock);                           // reserve `lock`: later readers wait
//     iso.send(2, kHandlerId, payload_bytes);    // delivered at the same logical time
//     iso.send(3, other_bytes);                  // into node 3's isotach receive queue
//   }                                            // issued when the scope ends (or end())
//   { iso::isochron iso(node); iso.assign(lock, a.get() + 1); }  // substantiate it
//   { iso::isochron iso(node); ticket = iso.fetch_add(next_job, 1); }  // one isochron
//
// Rules: one open isochron per node; an assign needs an outstanding sched by the same node
// on that variable; a node has at most one outstanding sched per variable. Breaking one
// throws iso::error (failed_precondition) from that call and adds nothing; the isochron
// stays open. An address outside isotach memory (or a range running past 2^64-1, or past
// the end of the array of a block operation) throws out_of_range; a 32-bit operation on a
// 64-bit variable throws invalid_argument. An isochron is limited in size: a message above
// node::max_message_size() throws out_of_range, and an operation that would make the
// isochron too large for the NIC's queue throws resource_exhausted (an isochron that goes
// to no other node never travels through it and has no such limit); both add nothing.
//
// Operations issued inside an isochron never block; end() blocks only while the NIC's
// queue is full or the destinations' flow-control credits are used up, and, with the NIC
// inline (nic_mode::inline_poll), briefly after this node slept in a wait: its NIC then
// stood aside from logical time and must rejoin before it can stamp the isochron, which
// takes an answer from the nodes that keep its switch's logical time (on one machine, by
// default, every node). end() waits for those answers for at most a millisecond; where
// one comes only later (its node computes), the isochron waits for this node's next call
// into the runtime. Many isochrons may be outstanding per node
// (pipelining). An inline NIC hands a stream of isochrons to the network in batches, at
// the node's next wait and every few tens of kilobytes: a node that ends an isochron and
// then computes for long without calling into the runtime should call node::poll() first.
#pragma once

#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "iso/notice.hpp"
#include "iso/shared.hpp"

namespace iso {

// Identifies a message handler; register the same ids on every node (node::set_handler).
using handler_id = std::uint32_t;

// The atomic read-modify-writes an isochron can hold (isochron::read_modify_write_raw).
enum class rmw_op : std::uint8_t { fetch_add = 9, exchange = 10, compare_exchange = 11 };

template <typename T>
concept shared_integer = shared_scalar<T> && std::is_integral_v<T>;

namespace detail {
// Throws out_of_range unless [first, first + count) lies within an array of `size`.
void check_block(std::size_t size, std::size_t first, std::size_t count, const char* what);
}  // namespace detail

class isochron {
 public:
  // Starts an isochron on `n`. Throws iso::error: failed_precondition if one is already
  // open there; the node's failure if it has failed (see ~isochron).
  explicit isochron(node& n);
  isochron(const isochron&) = delete;
  isochron& operator=(const isochron&) = delete;
  // Ends (issues) the isochron if end() was not called. Issuing can fail (a flow-control
  // time-out: a destination took no data for options::barrier_timeout; the job failed), and
  // then the isochron is lost. A destructor cannot report that, so the node fails instead:
  // from then on every new isochron and every call that waits (value::get, barrier,
  // quiesce, receive, ...) throws that error, naming this node, and iso::run fails the node.
  // Call end() to get the error as an exception where it happens.
  ~isochron();

  // Issues the isochron. Idempotent. Blocks, serving other nodes, while the NIC's queue is
  // full or a destination has no flow-control credits left; throws iso::error
  // (deadline_exceeded, naming the nodes that hold the credits) when credits do not come
  // back within options::barrier_timeout, or the job's failure. The isochron is lost then.
  void end();

  template <shared_scalar T>
  value<T> read(shared_var<T> v) {
    return value<T>(read_raw(v.where(), sizeof(T), 1));
  }
  // Reads `count` consecutive variables of `a` from index `first` as one request; they
  // must lie within `a` (out_of_range otherwise).
  template <shared_scalar T>
  block_value<T> read(shared_array<T> a, std::size_t first, std::size_t count) {
    detail::check_block(a.size(), first, count, "read");
    return block_value<T>(read_raw(a.first() + first, sizeof(T), count));
  }
  // Writes `x` to `v`. The value's type comes from the variable (only), so a literal
  // converts: iso.write(counters[4], 42) for a shared_var<std::int64_t>.
  template <shared_scalar T>
  void write(shared_var<T> v, std::type_identity_t<T> x) {
    const std::uint64_t bits = detail::to_bits(x);
    write_raw(v.where(), sizeof(T), std::span(&bits, 1));
  }
  // Writes `values` (any contiguous range of T: a std::vector, a std::array, a span, ...)
  // to consecutive variables of `a` from index `first` as one request; they must lie within
  // `a` (out_of_range otherwise).
  template <shared_scalar T>
  void write(shared_array<T> a, std::size_t first,
             std::type_identity_t<std::span<const T>> values) {
    detail::check_block(a.size(), first, values.size(), "write");
    std::vector<std::uint64_t> bits(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) bits[i] = detail::to_bits(values[i]);
    write_raw(a.first() + first, sizeof(T), bits);
  }
  // Makes `v` unsubstantiated: reads after this in logical time wait for the assign.
  template <shared_scalar T>
  void sched(shared_var<T> v) {
    sched_raw(v.where(), sizeof(T));
  }
  // Gives the value to this node's outstanding sched of `v` (its type from `v`, as write).
  template <shared_scalar T>
  void assign(shared_var<T> v, std::type_identity_t<T> x) {
    assign_raw(v.where(), sizeof(T), detail::to_bits(x));
  }
  // Atomic read-modify-writes. Each executes at every copy of `v` at this isochron's
  // logical time, in the one global order with everything else, so every copy computes the
  // same value with no round trip and no lock; the handle gets the value `v` held just
  // before (answered by the nearest copy, like a read). Any number may share an isochron
  // with other operations, atomically. On a variable awaiting its assign (after a sched)
  // one waits like a read, then applies to the assigned value.
  //
  // Adds `delta`; integers wrap (two's complement).
  template <shared_integer T>
  value<T> fetch_add(shared_var<T> v, std::type_identity_t<T> delta) {
    const std::uint64_t operand = detail::to_bits(delta);
    return value<T>(
        read_modify_write_raw(rmw_op::fetch_add, v.where(), sizeof(T), std::span(&operand, 1)));
  }
  // Stores `x`.
  template <shared_scalar T>
  value<T> exchange(shared_var<T> v, std::type_identity_t<T> x) {
    const std::uint64_t operand = detail::to_bits(x);
    return value<T>(
        read_modify_write_raw(rmw_op::exchange, v.where(), sizeof(T), std::span(&operand, 1)));
  }
  // Stores `desired` if `v` holds `expected` (compared bit for bit). It succeeded exactly
  // when the value returned equals `expected`.
  template <shared_scalar T>
  value<T> compare_exchange(shared_var<T> v, std::type_identity_t<T> expected,
                            std::type_identity_t<T> desired) {
    const std::uint64_t operands[2] = {detail::to_bits(expected), detail::to_bits(desired)};
    return value<T>(
        read_modify_write_raw(rmw_op::compare_exchange, v.where(), sizeof(T), operands));
  }

  // An isochronous message: `payload` reaches handler `handler` on node `to` at this
  // isochron's logical time, ordered with everything else. Up to node::max_message_size()
  // bytes (out_of_range above; resource_exhausted when the isochron would grow too large).
  void send(node_id to, handler_id handler, std::span<const std::byte> payload);
  // An isotach message: `payload` enters node `to`'s isotach receive queue
  // (node::iso_receive) at this isochron's logical time. Limits as for the handler form.
  void send(node_id to, std::span<const std::byte> payload);
  // A signal on `channel`: every node's receive queue gets a signal notice at this
  // isochron's logical time; signals on one channel in one pulse coalesce into one notice.
  void signal(channel_id channel);

  // Untyped forms, for bindings (the C API) and generated code.
  detail::read_handle read_raw(address a, std::size_t width, std::size_t count);
  void write_raw(address a, std::size_t width, std::span<const std::uint64_t> values);
  void sched_raw(address a, std::size_t width);
  void assign_raw(address a, std::size_t width, std::uint64_t bits);
  // `operands`: one 64-bit word (two for compare_exchange: expected, desired).
  detail::read_handle read_modify_write_raw(rmw_op op, address a, std::size_t width,
                                            std::span<const std::uint64_t> operands);

 private:
  friend class ordered_group;  // adds its messages to an open isochron
  friend class object;         // adds object writes to an open isochron
  node& node_;
  bool open_ = true;
};

}  // namespace iso
