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
//
// Rules: one open isochron per node; an assign needs an outstanding sched by the same node
// on that variable; a node has at most one outstanding sched per variable. Breaking one
// throws iso::error (failed_precondition) from that call and adds nothing; the isochron
// stays open. An address outside isotach memory throws out_of_range; a 32-bit operation on
// a 64-bit variable throws invalid_argument.
//
// Operations issued inside an isochron never block; end() blocks only while the NIC's
// queue is full. Many isochrons may be outstanding per node (pipelining).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "iso/notice.hpp"
#include "iso/shared.hpp"

namespace iso {

// Identifies a message handler; register the same ids on every node (node::set_handler).
using handler_id = std::uint32_t;

class isochron {
 public:
  // Starts an isochron on `n`. Throws failed_precondition if one is already open there.
  explicit isochron(node& n);
  isochron(const isochron&) = delete;
  isochron& operator=(const isochron&) = delete;
  // Ends (issues) the isochron if end() was not called. An error while issuing (the job
  // failed) is logged; call end() to get it as an exception instead.
  ~isochron();

  // Issues the isochron. Idempotent.
  void end();

  template <shared_scalar T>
  value<T> read(shared_var<T> v) {
    return value<T>(read_raw(v.where(), sizeof(T), 1));
  }
  // Reads `count` consecutive variables from `first` as one request.
  template <shared_scalar T>
  block_value<T> read(shared_array<T> a, std::size_t first, std::size_t count) {
    return block_value<T>(read_raw(a.first() + first, sizeof(T), count));
  }
  template <shared_scalar T>
  void write(shared_var<T> v, T x) {
    const std::uint64_t bits = detail::to_bits(x);
    write_raw(v.where(), sizeof(T), std::span(&bits, 1));
  }
  // Writes `values` to consecutive variables from `first` as one request.
  template <shared_scalar T>
  void write(shared_array<T> a, std::size_t first, std::span<const T> values) {
    std::vector<std::uint64_t> bits(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) bits[i] = detail::to_bits(values[i]);
    write_raw(a.first() + first, sizeof(T), bits);
  }
  // Makes `v` unsubstantiated: reads after this in logical time wait for the assign.
  template <shared_scalar T>
  void sched(shared_var<T> v) {
    sched_raw(v.where(), sizeof(T));
  }
  // Gives the value to this node's outstanding sched of `v`.
  template <shared_scalar T>
  void assign(shared_var<T> v, T x) {
    assign_raw(v.where(), sizeof(T), detail::to_bits(x));
  }
  // An isochronous message: `payload` reaches handler `handler` on node `to` at this
  // isochron's logical time, ordered with everything else.
  void send(node_id to, handler_id handler, std::span<const std::byte> payload);
  // An isotach message: `payload` enters node `to`'s isotach receive queue
  // (node::iso_receive) at this isochron's logical time. Up to node::max_message_size().
  void send(node_id to, std::span<const std::byte> payload);
  // A signal on `channel`: every node's receive queue gets a signal notice at this
  // isochron's logical time; signals on one channel in one pulse coalesce into one notice.
  void signal(channel_id channel);

  // Untyped forms, for bindings (the C API) and generated code.
  detail::read_handle read_raw(address a, std::size_t width, std::size_t count);
  void write_raw(address a, std::size_t width, std::span<const std::uint64_t> values);
  void sched_raw(address a, std::size_t width);
  void assign_raw(address a, std::size_t width, std::uint64_t bits);

 private:
  node& node_;
  bool open_ = true;
};

}  // namespace iso
