// Remote store: one-sided puts of bytes into another node's window and gets from it, the
// FCI model (OpenSHMEM's putmem, getmem and quiet), outside logical time. The network
// interfaces complete them alone: the target's host takes no part and need not poll (with
// a NIC on a thread of its own; with an inline NIC it must be in some runtime call, as for
// reads). For programs that want raw speed and order their accesses themselves; isotach
// shared variables (iso/shared.hpp) are the sequentially consistent alternative.
//
//   iso::window w = node.register_window(4096);           // collective: 4 KiB on every node
//   node.put(w, /*target=*/1, /*offset=*/0, bytes);       // returns once the bytes are copied
//   node.fence();                                          // the put is visible at node 1
//   iso::remote_bytes got = node.get(w, 1, 0, 16);        // a handle, like a read's
//   std::span<const std::byte> b = got.get();             // blocks until the bytes are here
//   std::span<std::byte> mine = node.local(w);            // this node's own window
//
// register_window(bytes) is collective: every node registers the same windows, of the same
// sizes, in the same order (a node that registers a different size fails the job, naming
// the nodes that disagree); it returns once every node serves the new window. Each node's
// window is `bytes` bytes of zeroed memory the runtime owns, until the node ends.
//
// put(w, target, offset, bytes) writes bytes [offset, offset + size) of `target`'s window.
// It returns once the bytes are queued (they may be reused), before they reach the target.
// fence() waits until every put this node made before it is visible at its target; then a
// message, a barrier or any other signal to the target lets it read them. Puts and gets of
// one node to one target are applied in the order made: a get sees the earlier puts of its
// own node to that node, without a fence. Nothing orders puts of different nodes to the
// same bytes, nor a put against the target host's own accesses: that is the program's
// business (use a fence and a barrier, or isotach memory).
//
// Memory model. Window bytes are plain memory, not atomics: the target's NIC writes a put
// into it (and reads it for a get) while the target's host runs. A put happens before the
// target host's accesses, so that they see its bytes whole, once the origin called fence()
// after the put and then signalled the target: node::send (received there), an isochron
// the target executes (a write it reads, an isochronous message), or a barrier both pass.
// The same signals order the other way: what a host wrote into its own window before
// signalling is what a later get or put of the signalled node sees or overwrites. The
// runtime gives each of these signals a happens-before edge in the C++ sense, including
// the barrier, which passes beside the NICs (tools such as ThreadSanitizer check them).
// Without such a signal, a host that reads bytes a put may be writing, or writes bytes a
// get may be reading, has a data race: it may see bytes of neither version or of both.
//
// get(w, target, offset, size) returns a remote_bytes handle whose get() blocks until the
// bytes are here. A put or get may be up to node::max_message_size() bytes (about 2 MiB);
// larger ones travel as several transport packets and arrive whole. Either may target this
// node itself.
//
// Errors (iso::error, thrown by the call, before anything is sent): invalid_argument for a
// default-constructed window or one no registration made, or a target outside the job;
// out_of_range for bytes outside the window (naming offset, size and the window's size)
// and for a put or get larger than max_message_size(); deadline_exceeded from fence() after
// options::barrier_timeout; aborted when another node failed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "iso/shared.hpp"

namespace iso {

class window {
 public:
  // Names no window: put and get refuse it.
  window() = default;

  // Its place among the job's windows, in registration order from 0.
  [[nodiscard]] std::uint32_t id() const { return id_; }
  // Bytes of every node's window.
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] bool valid() const { return id_ != kNone; }

 private:
  friend class node;
  window(std::uint32_t id, std::size_t size) : id_(id), size_(size) {}
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  std::uint32_t id_ = kNone;
  std::size_t size_ = 0;
};

// The result of node::get. The same rules as value (iso/shared.hpp): move-only, may be
// dropped before get(), may outlive its node (using it then is an error).
class [[nodiscard]] remote_bytes {
 public:
  remote_bytes() = default;
  // Blocks until the bytes are here; they stay valid while this handle lives. Throws
  // iso::error as value::get().
  [[nodiscard]] std::span<const std::byte> get() const {
    return std::as_bytes(handle_.wait()).first(size_);
  }
  [[nodiscard]] bool ready() const { return handle_.ready(); }
  [[nodiscard]] std::size_t size() const { return size_; }

 private:
  friend class node;
  remote_bytes(detail::read_handle h, std::size_t size) : handle_(std::move(h)), size_(size) {}
  detail::read_handle handle_;
  std::size_t size_ = 0;
};

}  // namespace iso
