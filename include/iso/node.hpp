// A node of a parallel job: who am I, how many are we, and the means to talk.
//
// A program usually gets its node from iso::run(), which joins the job described by the
// launcher (isorun) and calls the program's body once per node: once in each process of an
// `shm` job, or on one thread per node of an `inproc` job.
//
//   #include <iso/iso.hpp>
//   int main(int argc, char** argv) {
//     return iso::run(argc, argv, [](iso::node& node) {
//       std::printf("hello from node %u of %u\n", node.id(), node.count());
//       node.barrier();
//     });
//   }
//
// Thread safety: a node is used by one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "iso/counter.hpp"
#include "iso/isochron.hpp"
#include "iso/notice.hpp"
#include "iso/options.hpp"
#include "iso/shared.hpp"
#include "iso/status.hpp"
#include "iso/trace.hpp"
#include "iso/window.hpp"

namespace iso {

using node_id = std::uint32_t;

namespace detail {
class node_state;
}

// A message received by node::receive(). Its bytes are not copied: they stay where the NIC
// delivered them until the message is destroyed or the node's next receive() or
// try_receive(), whichever comes first, and their space (with the sender's credits) is
// then reused. A message still alive at the next receive gets a copy of its bytes then, so
// holding messages is always safe: bytes() stays valid while the message lives (and its
// node exists, if no receive came after it).
class message {
 public:
  message();
  message(message&&) noexcept;
  message& operator=(message&&) noexcept;
  ~message();

  [[nodiscard]] node_id source() const { return source_; }
  [[nodiscard]] std::span<const std::byte> bytes() const;

 private:
  friend class detail::node_state;
  struct holder;
  node_id source_ = 0;
  std::unique_ptr<holder> holder_;
};

class node {
 public:
  node(const node&) = delete;
  node& operator=(const node&) = delete;
  ~node();

  // This node's id, 0..count()-1.
  [[nodiscard]] node_id id() const;
  // The number of nodes in the job.
  [[nodiscard]] std::uint32_t count() const;

  // Waits until every node of the job has called barrier() as often as this one, serving
  // the other nodes meanwhile. It also orders isotach memory: every isochron any node
  // issued before the barrier has executed on every node when barrier() returns, so reads
  // after it see writes before it. Fibers of a node take turns: each call is one of the
  // node's barriers. Throws iso::error: failed_precondition inside an open isochron (end it
  // first), a message handler, an object operation's guard or body or an inspection, or
  // when the nodes made different collective calls there (one node's barrier() against the
  // others' end of the job, for one); deadline_exceeded after options::barrier_timeout,
  // naming the nodes that did not arrive: this node's arrival stands, and calling barrier()
  // again waits for the same barrier (until then, another collective call or an isochron is
  // failed_precondition: the barrier would not order it); aborted when another node failed,
  // or this node's failure (see isochron::~isochron). Any other collective call that runs
  // out of time leaves the node unable to make collective calls.
  void barrier();

  // Sends `bytes` to node `to` (which may be this node); the bytes are copied once and may
  // be reused when send() returns. Messages from one node to another arrive in the order
  // sent. Blocks, polling, while the path to `to` is full. Throws iso::error:
  // invalid_argument for an unknown node, out_of_range above max_message_size().
  void send(node_id to, std::span<const std::byte> bytes);

  // The next message for this node, in FIFO order per sender; blocks until one arrives.
  [[nodiscard]] message receive();
  // The next message if one has arrived, without blocking.
  [[nodiscard]] std::optional<message> try_receive();

  // Largest message send() accepts: about 2 MiB (messages larger than one transport packet
  // travel as fragments and arrive whole).
  [[nodiscard]] std::size_t max_message_size() const;

  // A snapshot of this node's messaging layer: logical time, credits, queue depths and
  // packet counts per peer (iso/status.hpp).
  [[nodiscard]] node_status status() const;

  // The settings this node runs with.
  [[nodiscard]] const iso::options& options() const;

  // Allocates `count` shared variables of type T, placed by `where`. Collective: every
  // node makes the same allocations in the same order (SPMD programs do so naturally) and
  // gets the same addresses; it returns once every node has made the allocation, so the
  // new variables can be used at once. Throws iso::error: invalid_argument for a placement
  // naming a bad node (on every node: the placement is the same everywhere);
  // resource_exhausted, before anything is built, when isotach memory would hold more than
  // 2^32 variables in all or one copy of the new ones (16 bytes per variable) would not fit
  // in the host's memory, and, failing the node, if memory runs out nevertheless;
  // failed_precondition inside an open isochron.
  template <shared_scalar T>
  shared_array<T> allocate(std::size_t count, const placement& where = placement::everywhere()) {
    return shared_array<T>(allocate_raw(count, sizeof(T), where), count);
  }
  address allocate_raw(std::size_t count, std::size_t width, const placement& where);

  // Registers the handler for isochronous messages sent to `id`. Register the same ids on
  // every node before any message can arrive (before the first barrier after start-up).
  // Ids 0 to 2^32-3; 2^32-2 and 2^32-1 are the runtime's (invalid_argument). An empty `fn`
  // removes the handler: sending to `id` from here is then not_found, as for an id never
  // registered, and a message for it from another node stops this node, naming the id.
  // Called inside a handler (to replace or remove itself, or another), the change takes
  // effect once that handler returns.
  // A handler runs on this node's thread, at the message's logical time, and must not
  // issue isochrons or block: waiting or polling from a handler is a failed_precondition
  // error, and an exception that leaves a handler stops the node with an error naming it.
  void set_handler(handler_id id,
                   std::function<void(node_id source, std::span<const std::byte> payload)> fn);

  // The isotach receive queue: the next isotach message (isochron::send without a
  // handler), signal notice or barrier notice, in logical-time order (iso/notice.hpp).
  // Blocks until there is one.
  [[nodiscard]] notice iso_receive();
  // The same without blocking.
  [[nodiscard]] std::optional<notice> try_iso_receive();

  // Signals `channel` in an isochron of its own (isochron::signal). Throws
  // failed_precondition inside an open isochron, invalid_argument for a bad channel.
  void signal(channel_id channel);

  // Starts this node's part of the next isotach barrier on `channel`, without blocking;
  // its completion arrives as a barrier notice, at one logical time on every node. Every
  // node takes part in every barrier on a channel, in the same mode. Throws
  // failed_precondition inside an open isochron or while this node's previous barrier on
  // the channel has not completed here; invalid_argument for a bad channel. Two nodes
  // starting one barrier in different modes fail the job.
  void start_barrier(channel_id channel, barrier_mode mode);
  // Whether the last barrier this node started on `channel` has completed here.
  [[nodiscard]] bool barrier_complete(channel_id channel) const;

  // Makes progress without blocking: executes what is due and serves other nodes. Call it
  // in long computations when the NIC runs inline (nic_mode::inline_poll). Every 64th poll
  // also checks the job, as a waiting node does, so that a loop that only polls ends too:
  // it throws iso::error (aborted) naming
  //   - a node that failed, at the next check;
  //   - a node whose process ended without leaving the job (before iso::run returned on
  //     it: _exit, a signal): "node N ended before leaving the job", within about
  //     0.1 s of its end where this process can see that one, and at the next check once
  //     isorun reaped it (also from another pid namespace, as in a container);
  //   - a node whose process, where this one can see it, stayed stopped (SIGSTOP, a
  //     debugger) past half the barrier timeout: "node N stopped responding". A shorter
  //     stop holds up nobody that only polls, and is no failure.
  // A node that left the job (iso::run returned on it) and then ended is the normal end:
  // no poll reports it. (Checking reads the clock, which costs more than a poll that
  // finds nothing.) A poll also sends again the dropped object calls
  // (iso::object_call destroyed before its result) that their owner answered "moved" when
  // that needs no wait: such a write goes into the objects order, such a read runs on the
  // replica here; a failure to send one fails the node and is thrown.
  void poll();

  // Waits until every isochron this node issued before the call has executed on every
  // node, serving the others meanwhile. Afterwards every node sees this node's writes and
  // has its messages: anything another node does next (a read of its own copy included)
  // comes after them, with no barrier on its side. Only this node calls it; the others
  // need only make progress (be in any call into the runtime, or poll()), as for reads.
  // Costs one small isochron to every other node and their answers.
  // Throws iso::error: failed_precondition inside an open isochron or a message handler;
  // deadline_exceeded after options::barrier_timeout, naming the nodes that did not answer;
  // aborted when another node failed, or this node's failure (see isochron::~isochron).
  void quiet();

  // Waits until every isochron this node issued has executed here and every read has its
  // value. Throws iso::error: failed_precondition inside an open isochron (its reads could
  // never arrive), or the job's or this node's failure.
  void quiesce();

  // NIC counters (iso/counter.hpp, which says more). Allocates a counter held by node
  // `holder`'s NIC, starting at 0. Collective. Throws iso::error: invalid_argument for a
  // holder outside the job; failed_precondition inside an open isochron; as barrier().
  [[nodiscard]] counter allocate_counter(node_id holder);
  // Adds `delta` to `c`; the handle gets the value before the add. May be called inside an
  // isochron (it is not part of it). Throws iso::error: invalid_argument for a counter no
  // allocation made or a holder outside the job, before anything is sent.
  [[nodiscard]] value<std::uint64_t> fetch_add(const counter& c, std::uint64_t delta);

  // Remote store (iso/window.hpp, which says more). Registers a window of `bytes` bytes on
  // every node. Collective. Throws iso::error: invalid_argument for 0 bytes; out_of_range
  // above 2^40; resource_exhausted when the memory cannot be had; failed_precondition inside
  // an open isochron; as barrier().
  [[nodiscard]] window register_window(std::size_t bytes);
  // This node's own window `w`: its host's view, not ordered against puts of others.
  [[nodiscard]] std::span<std::byte> local(const window& w);
  // Puts `bytes` at `offset` of node `target`'s window `w`. Throws iso::error:
  // invalid_argument for a bad window or target; out_of_range outside the window or above
  // max_message_size().
  void put(const window& w, node_id target, std::size_t offset, std::span<const std::byte> bytes);
  // Gets `size` bytes at `offset` of node `target`'s window `w`. Errors as put().
  [[nodiscard]] remote_bytes get(const window& w, node_id target, std::size_t offset,
                                 std::size_t size);
  // Waits until every put this node made before is visible at its target. Throws
  // iso::error: deadline_exceeded after options::barrier_timeout; aborted when another
  // node failed; failed_precondition inside a message handler.
  void fence();

  // The operations executed at this node so far (empty unless options::trace).
  [[nodiscard]] const std::vector<trace_event>& trace() const;

  // Relaxed mode, for teaching only (options::relaxed says what it gives up). A job started
  // with options::relaxed begins in it; set_relaxed(false) returns this node to isotach's
  // sequential consistency for the isochrons it issues and the remote parts it receives
  // from then on, set_relaxed(true) leaves it again. Meant to be called by every node at
  // the same point between two barrier()s (after the first, every isochron issued before
  // it has executed everywhere), so that a program can compare both modes in one job;
  // writes already applied early stay applied, once. Throws iso::error:
  // failed_precondition inside an isochron, or set_relaxed(true) in a job that did not ask
  // for relaxed mode (a job without options::relaxed never runs relaxed).
  void set_relaxed(bool on);
  // Whether this node runs in relaxed mode now.
  [[nodiscard]] bool relaxed() const;

 private:
  friend class detail::node_state;
  friend class isochron;
  explicit node(std::unique_ptr<detail::node_state> state);
  std::unique_ptr<detail::node_state> state_;
};

}  // namespace iso
