// Fibers: many light processes on one node, as Orca's processes were. A fiber runs a
// callable on the node's thread, with a stack of its own; it runs until it waits, and then
// the next fiber of the node that may go on runs, in turn.
//
//   iso::fiber worker = iso::spawn(node, [&] {
//     iso::isochron iso(node);
//     iso::value<std::int64_t> v = iso.read(x);
//     iso.end();
//     use(v.get());               // waits: the node's other fibers run meanwhile
//   }, {.name = "worker"});
//   worker.join();                // waits for it (running the others)
//
// Scheduling. Cooperative, on the node's one thread: a fiber gives way only where it waits
// (value::get, receive, iso_receive, barrier, quiet, quiesce, fence, allocations and other
// collective calls, ordered_group::receive, join, a full send path: every wait of the
// runtime) or calls iso::yield(). A fiber that computes without waiting keeps the others
// (and the node's service to other nodes) waiting; call yield() or node::poll() in long
// computations. When every fiber of the node waits, the node makes progress rounds and then
// sleeps with its usual waiter policy (options::wait): an idle node burns no CPU. The body
// given to iso::run is the node's first fiber ("main"). A new fiber first runs when the
// spawning one waits or yields.
//
// What a fiber may use: every operation of its node (iso/node.hpp), isochrons and shared
// variables, ordered groups, fork (iso/fork.hpp). Collective calls (barrier, allocate,
// allocate_counter, register_window, ordered_group's constructor) count per node, not per
// fiber: one fiber of each node makes each of them, in the same order on every node. Where
// two fibers of a node make them at once, they take turns: the second waits until the
// first one's has passed.
// Two fibers receiving messages take them in turn, each message once. A barrier orders
// the isochrons its node issued before it was called: those another fiber issues while
// the barrier waits may not be among them (join that fiber, or have it quiet(), first).
//
// Isochrons. A node has one open isochron at a time, and it belongs to the fiber that
// opened it until its end() returns. Another fiber that opens an isochron, or makes a call
// that needs none open (barrier, quiet, quiesce, allocate, signal, ...), waits until then
// and goes on (not an error). The owner itself gets the usual failed_precondition for such
// calls, and join() and yield() inside its own open isochron are failed_precondition too
// (the fibers it would run might wait for its isochron). A read's value can be had only
// once the isochron that read it has ended, whichever fiber asks.
//
// Errors. An exception that leaves a fiber fails the node: every later wait on it throws an
// iso::error naming the fiber and the exception's message (its code, for an iso::error),
// iso::run reports it, and the job fails. A body (main) that returns while fibers it
// spawned still run fails the node too, naming them (failed_precondition); they are not
// unwound. A fiber handle is used only while its node exists, on the node's thread.
// Message handlers (node::set_handler) may spawn fibers but not join or yield.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "iso/node.hpp"

namespace iso {

namespace runtime {
struct fiber_record;
}

struct fiber_options {
  std::string name = "fiber";  // in errors and in the list of fibers left at the end
  // The fiber's stack, with a guard page below it; only the pages it touches take memory.
  std::size_t stack_bytes = 256 * 1024;
};

// A spawned fiber. Move-only; destroying a handle (or one never joined) detaches the fiber,
// which runs on, but must still end before the node's body returns.
class fiber {
 public:
  fiber();
  fiber(fiber&&) noexcept;
  fiber& operator=(fiber&&) noexcept;
  ~fiber();

  // Whether this handle names a fiber that has not been joined.
  [[nodiscard]] bool joinable() const;
  // Whether the fiber has ended (returned or thrown); does not wait.
  [[nodiscard]] bool done() const;
  // Waits until the fiber has ended (running the node's other fibers meanwhile); then the
  // handle is no longer joinable. Throws iso::error: failed_precondition for a handle that
  // names no fiber, for a fiber joining itself, or inside the caller's open isochron; the
  // fiber's own exception (see Errors), or the node's failure.
  void join();

 private:
  friend fiber spawn(node& n, std::function<void()> body, fiber_options opts);
  fiber(node& n, std::shared_ptr<runtime::fiber_record> record);
  node* node_ = nullptr;
  std::shared_ptr<runtime::fiber_record> record_;
};

// Starts `body` as a new fiber of `n`; it first runs when the calling fiber waits or
// yields. Throws iso::error: invalid_argument for a stack under 16 KiB or over 1 TiB;
// resource_exhausted when its stack cannot be had.
fiber spawn(node& n, std::function<void()> body, fiber_options opts = {});

// Lets every other fiber of `n` that may go on run once, after a round of progress (with
// no other fiber, the same as node::poll()). Throws iso::error: failed_precondition inside
// the caller's open isochron or a message handler; the node's failure.
void yield(node& n);

// The number of fibers of `n` spawned and not yet ended (main not counted).
[[nodiscard]] std::size_t live_fibers(node& n);

}  // namespace iso
