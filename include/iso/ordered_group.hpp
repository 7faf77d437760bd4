// A totally ordered group: bytes submitted by any member reach every member, the sender
// included, and every member receives the group's messages in one and the same order,
// which keeps each sender's order (per-sender FIFO). Replicated state machines apply the
// group's messages in that order and stay identical.
//
//   std::vector<iso::node_id> replicas = {0, 2, 3};
//   iso::ordered_group g(node, replicas);           // every node of the job calls this
//   if (g.member()) {
//     g.submit(as_bytes(op));                       // may wait in a batch until flush()
//     iso::ordered_message m = g.receive();         // flushes first; blocks
//     apply(m.sender, m.bytes);
//   }
//   {                                               // isotach order: atomic with memory
//     iso::isochron iso(node);
//     iso.write(version, 7);
//     g.submit(iso, as_bytes(op));                  // every member sees both or neither
//   }
//
// Construction is collective over the whole job: every node builds the job's groups in
// the same order with the same members and order (a node outside a group gets an object it
// can only ask member() and members() of); the constructor returns once every node has
// built it, and a node that builds another group fails the job's next barrier naming
// `ordered_group`. Members may be any subset of the job; groups may overlap.
//
// Orders (iso::order_kind; options.ordering is the default, ISO_ORDERING overrides it):
//   sequencer  a counter held by the NIC of the lowest member numbers each message (its
//              host is never asked); NICs forward it along per-sender spanning trees
//              (options.multicast_tree: binary, chain or binomial) and hold it back until
//              every lower number was delivered. Ordered within the group only.
//   isotach    a message is an isochronous message to every member (the sender too),
//              delivered at its isochron's logical time: the group's order is the one
//              global order of isochrons, so it is ordered against every shared-variable
//              operation, signal and barrier too, and submit(isochron&, bytes) makes a
//              message atomic with the isochron's other operations. One NIC record
//              carries the isochron with a copy for each member, so the group's maximum
//              message is about the job's maximum divided by the number of members.
//
// Small messages are batched: submit() keeps a message in this node's batch for the group
// until the batch is full, or flush(), receive() or try_receive() is called (or the group
// is destroyed); a batch is one ordered message underneath, so batching never reorders.
// Flow control: a member that does not call into the runtime stalls the group's senders
// after a bounded number of messages; nothing is lost and no buffer grows without bound,
// except the inbox of a member that polls but never receives. A sender stalled so for
// options.barrier_timeout gets deadline_exceeded from the call that sends (submit(), flush(),
// receive(), try_receive()), naming the group and its members; the batch that call was
// sending is not sent. Groups may overlap freely: each group's traffic has flow control of
// its own on every link, so overlapping groups cannot deadlock (a stalled member still
// stalls its senders in every group, through their own window of messages in flight).
//
// Errors (iso::error): an empty member list, a member that is not a node of the job or
// appears twice (invalid_argument, naming it), a message larger than max_message_size()
// (invalid_argument; nothing is sent), submit/receive on a non-member (failed_precondition),
// submit(isochron&, ...) on a sequencer-ordered group or with an isochron that is issued or
// another node's (failed_precondition), a stalled member (deadline_exceeded, above), and a
// failed node or job. Thread safety: as its
// node, one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "iso/node.hpp"
#include "iso/options.hpp"

namespace iso {

class isochron;

struct ordered_message {
  node_id sender = 0;
  std::vector<std::byte> bytes;
};

class ordered_group {
 public:
  // Collective (see above); members in any order. The order is options.ordering.
  ordered_group(node& n, std::span<const node_id> members);
  ordered_group(node& n, std::span<const node_id> members, order_kind order);
  ordered_group(ordered_group&&) noexcept;
  ordered_group& operator=(ordered_group&&) noexcept;
  // Sends what is batched (errors are lost here: call flush() first to see them).
  ~ordered_group();

  [[nodiscard]] bool member() const;
  // Sorted.
  [[nodiscard]] std::span<const node_id> members() const;
  [[nodiscard]] order_kind order() const;
  // The largest message submit() takes.
  [[nodiscard]] std::size_t max_message_size() const;

  // Adds `bytes` to the group's order, after every message this node submitted before.
  // Not inside an open isochron (failed_precondition): use the form below.
  void submit(std::span<const std::byte> bytes);
  // Isotach order only: adds `bytes` to the open isochron `in` of this node, together with
  // what this node batched before (which keeps per-sender FIFO). Members receive it at the
  // isochron's logical time, atomically with its other operations: a member that reads a
  // variable the isochron wrote sees the message delivered (once it calls receive or
  // try_receive), and a member that received the message reads the written value. Never
  // blocks; resource_exhausted (nothing added) when the isochron would grow too large.
  void submit(isochron& in, std::span<const std::byte> bytes);
  // Sends this node's batch now.
  void flush();
  // The next message in the group's order; waits for it.
  [[nodiscard]] ordered_message receive();
  // The next message if one has arrived.
  [[nodiscard]] std::optional<ordered_message> try_receive();

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace iso
