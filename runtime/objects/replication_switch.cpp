// Automatic placement between a single copy and replicas (iso::object_placement::automatic).
//
// Single copy -> replicated. The owner counts the calls it runs by kind; after each window
// of kSwitchWindow calls in which reads were at least kReplicateReadsPerWrite times the
// writes, its replies ask their callers to replicate the object (its own calls ask too).
// A caller so asked puts a replicate message into the objects order; at that point of the
// order every node marks the object replicated, and the owner ships its copy (state and
// waiting calls) to every other node as that node's replica. A node whose replica is on its
// way keeps the order's messages for the object until it arrives, then applies them in
// order. Waiting writes keep their place on every replica; a waiting read stays on its
// caller's replica only. A request that reaches a node once the object is replicated is
// answered `moved` to "replicated", and its caller dispatches it again, now through the
// order (a write) or on its own replica (a read): it ran nowhere before, so it runs once.
//
// Replicated -> single copy. Every replica counts, from the order, the writes per sender
// and the reads that nodes report (each node reports its replica's reads every
// kReadsReport of them, by a message of the order). When a window of kSwitchWindow
// counted calls holds at least as many writes as reads, every replica, at the same point
// of the order, makes the object a single copy on its heaviest writer (the lowest id among
// equals): that node keeps its replica and the waiting writes; the others drop theirs and
// send their own waiting reads to it as requests. Writes ordered before a node learned of
// the switch reach the new owner through the order, and it runs them as requests from
// their senders, in order.
//
// The two thresholds (reads >= 4 x writes to replicate, writes >= reads to stop) leave a
// band between them in which the object stays as it is, so a mix near one threshold does
// not switch it back and forth. Every decision happens at a point of the job-wide order,
// so every node switches at the same point and results never depend on placement.
#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_format.h"
#include "runtime/objects/object_table.hpp"
#include "runtime/objects/object_wire.hpp"

namespace iso::runtime {
namespace {

namespace wire = objects_wire;

constexpr std::uint64_t kSwitchWindow = 64;
constexpr std::uint64_t kReadsReport = 16;

bool can_switch(const state_functions& f) { return f.save && f.load; }

}  // namespace

void object_table::note_call(entry& e, comm::node_id caller, const operation& op) {
  note_use(e, caller);
  if (!e.automatic || !can_switch(e.type->state)) return;
  if (op.kind == operation_kind::write) {
    ++e.window_writes;
  } else {
    ++e.window_reads;
  }
  if (e.window_reads + e.window_writes < kSwitchWindow) return;
  e.replicas_wanted = e.window_reads >= kReplicateReadsPerWrite * e.window_writes &&
                      packed_copy(e, /*replica=*/true).size() <= max_direct_;
  e.window_reads = 0;
  e.window_writes = 0;
}

std::uint8_t object_table::offer_for_call(entry& e, comm::node_id caller) {
  if (e.replicas_wanted) return wire::kOfferReplicas;
  return offer_for(e, caller) ? wire::kOfferCopy : 0;
}

absl::Status object_table::replicate(object_id id) {
  const std::uint64_t call = next_call_++;
  pending_[call] = {.object = id};
  if (absl::Status s = send_ordered(wire::kReplicateOp, id, call, {}); !s.ok()) {
    pending_.erase(call);
    return s;
  }
  return wait(call).status();
}

void object_table::apply_replicate(const ordered_delivery& d, object_id id, std::uint64_t call) {
  absl::StatusOr<entry*> found = find(id, "replication");
  if (!found.ok() || !(*found)->automatic) {
    loop_.fail(absl::InvalidArgumentError(absl::StrFormat(
        "ordered replication from node %u names object %u, which is not an automatic object here",
        d.sender, id)));
    return;
  }
  entry& e = **found;
  // A second request, ordered after the first switched it, changes nothing.
  if (e.where == object_placement::single_copy) {
    e.where = object_placement::replicated;
    ++e.moves;
    reset_uses(e);
    e.replicas_wanted = false;
    e.window_reads = 0;
    e.window_writes = 0;
    e.writes_by.assign(nodes_, 0);
    e.unreported_reads = 0;
    if (e.owner == self_) {
      if (e.state) {
        ship_replicas(e);
      } else {
        e.replicate_on_arrival = true;  // its copy is still on its way here
        install_early(e);  // or came, relayed at this switch's epoch, before it was applied
      }
    } else {
      install_early(e);
    }
  }
  if (d.sender == self_) complete(call, {});
}

namespace {

// What stays in a replica's queue: every waiting write (it waits on every replica) and this
// node's own waiting reads.
template <typename Queue>
void keep_replica_calls(Queue& queue, const std::vector<operation>& ops, comm::node_id self) {
  for (auto it = queue.begin(); it != queue.end();) {
    const bool write = ops[it->op].kind == operation_kind::write;
    if (!write && it->caller != self) {
      it = queue.erase(it);
      continue;
    }
    it->logged = write;
    ++it;
  }
}

}  // namespace

void object_table::ship_replicas(entry& e) {
  const std::vector<std::byte> packet = packed_copy(e, /*replica=*/true);
  if (packet.size() > max_direct_) {
    loop_.fail(absl::ResourceExhaustedError(absl::StrFormat(
        "object %u (%s): its copy (%u bytes with its waiting calls) exceeds the largest packet "
        "of %u bytes and cannot be replicated",
        e.id, e.type->name, packet.size(), max_direct_)));
    return;
  }
  for (comm::node_id n = 0; n < nodes_; ++n) {
    if (n != self_) outbox_.push_back({.to = n, .bytes = packet});
  }
  keep_replica_calls(e.queue, e.type->ops, self_);
}

void object_table::install_replica(entry& e, std::span<const std::byte> packet) {
  install(e, packet);
  if (!e.state) return;  // a malformed copy failed the node
  keep_replica_calls(e.queue, e.type->ops, self_);
  apply_held(e);
  retry_deferred(e);
}

void object_table::apply_held(entry& e) {
  // The order's messages for the object that came while the replica was on its way.
  std::vector<ordered_delivery> held = std::move(e.held);
  e.held.clear();
  for (const ordered_delivery& d : held) apply_ordered(d);
}

bool object_table::hold_ordered(const ordered_delivery& d, object_id id, std::uint32_t op) {
  if (op == wire::kCreateOp) return false;
  auto it = objects_.find(id);
  if (it == objects_.end()) return false;
  entry& e = *it->second;
  if (!e.automatic || e.where != object_placement::replicated || e.state) return false;
  e.held.push_back(d);
  return true;
}

bool object_table::ordered_to_single_copy(const ordered_delivery& d, object_id id, std::uint32_t op,
                                          std::uint64_t call) {
  auto it = objects_.find(id);
  if (it == objects_.end()) return false;
  entry& e = *it->second;
  if (!e.automatic || e.where != object_placement::single_copy) return false;
  // A write ordered while the object was replicated: the owner runs it as the sender's
  // request, at this point of the order; the others leave it to the owner.
  if (e.owner == self_) {
    const std::span<const std::byte> args = std::span(d.bytes).subspan(sizeof(wire::write_header));
    serve({.from = d.sender,
           .object = id,
           .op = op,
           .call = call,
           .args = {args.begin(), args.end()},
           .epoch = e.moves});
  }
  return true;
}

void object_table::note_ordered(entry& e, const ordered_delivery& d, const operation& op) {
  if (e.where != object_placement::replicated || op.kind != operation_kind::write) return;
  if (e.writes_by.size() != nodes_) e.writes_by.assign(nodes_, 0);
  ++e.window_writes;
  ++e.writes_by[d.sender];
  decide_replicated(e);
}

void object_table::apply_reads(const ordered_delivery& d, object_id id) {
  const std::span<const std::byte> body = std::span(d.bytes).subspan(sizeof(wire::write_header));
  std::uint64_t reads = 0;
  absl::StatusOr<entry*> found = find(id, "read report");
  if (!found.ok() || body.size() != sizeof(reads)) {
    loop_.fail(absl::InvalidArgumentError(absl::StrFormat(
        "ordered read report of %u bytes from node %u is malformed or names no object here",
        d.bytes.size(), d.sender)));
    return;
  }
  std::memcpy(&reads, body.data(), sizeof(reads));
  entry& e = **found;
  if (!e.automatic || e.where != object_placement::replicated) return;  // switched since
  e.window_reads += reads;
  decide_replicated(e);
}

void object_table::decide_replicated(entry& e) {
  if (e.window_reads + e.window_writes < kSwitchWindow) return;
  const bool writes_dominate = e.window_writes >= e.window_reads;
  if (e.writes_by.size() != nodes_) e.writes_by.assign(nodes_, 0);
  const auto heaviest = static_cast<comm::node_id>(
      std::max_element(e.writes_by.begin(), e.writes_by.end()) - e.writes_by.begin());
  e.window_reads = 0;
  e.window_writes = 0;
  std::fill(e.writes_by.begin(), e.writes_by.end(), 0);
  if (writes_dominate && can_switch(e.type->state)) unreplicate(e, heaviest);
}

void object_table::unreplicate(entry& e, comm::node_id to) {
  e.where = object_placement::single_copy;
  e.owner = to;
  ++e.moves;
  reset_uses(e);
  e.unreported_reads = 0;
  if (to == self_) {
    // Keeps its replica as the copy, with the waiting writes; requests that waited for
    // this point of the order are served now.
    retry_deferred(e);
    return;
  }
  std::deque<waiting_call> queue = std::move(e.queue);
  e.queue.clear();
  e.state.reset();
  for (waiting_call& w : queue) {
    // Waiting writes wait at the owner, which replies to their callers.
    if (w.caller != self_ || e.type->ops[w.op].kind == operation_kind::write) continue;
    auto p = pending_.find(w.call);
    if (p == pending_.end()) continue;
    request r{.from = self_,
              .object = e.id,
              .op = w.op,
              .call = w.call,
              .args = std::move(w.raw),
              .epoch = e.moves};
    send_request(r, to);
    p->second.sent = std::move(r);
  }
  retry_deferred(e);  // requests that waited for this point are told where the copy is
}

bool object_table::redo_ready(std::uint64_t call) const {
  auto it = pending_.find(call);
  if (it == pending_.end() || !it->second.sent) return true;
  auto found = objects_.find(it->second.sent->object);
  if (found == objects_.end()) return true;  // redo() names the missing object
  const entry& e = *found->second;
  // Once this node has applied what the owner had, and has the copy it needs.
  if (e.moves < it->second.sent->epoch) return false;
  if (e.where == object_placement::replicated) return static_cast<bool>(e.state);
  return e.owner != self_ || static_cast<bool>(e.state);
}

absl::Status object_table::redo(std::uint64_t call) {
  auto it = pending_.find(call);
  if (it == pending_.end() || !it->second.sent) return absl::OkStatus();
  it->second.redo = false;
  request r = *it->second.sent;
  absl::StatusOr<entry*> found = find(r.object, "object call");
  if (!found.ok()) return found.status();
  entry& e = **found;
  // Bounded: a node leaving the job settles its dropped calls here, before the end barrier
  // whose own deadline would name the missing node.
  absl::StatusOr<bool> ready =
      loop_.wait_until(absl::Now() + call_timeout_, [&] { return redo_ready(call); });
  if (!ready.ok()) return ready.status();
  if (!*ready) {
    // Lost, and said so here, once: nothing waits for it again (not this node's leaving),
    // and an answer that still comes is discarded.
    pending_.erase(call);
    return absl::DeadlineExceededError(absl::StrFormat(
        "%s, called on node %u and to be sent again: within %s this node did not apply the "
        "object's move %u or get its copy (last known owner: node %u)",
        describe(e.id, e.type->name, e.type->ops[r.op]), self_, absl::FormatDuration(call_timeout_),
        r.epoch, e.owner));
  }
  it = pending_.find(call);
  if (it == pending_.end()) return absl::OkStatus();
  const operation& op = e.type->ops[r.op];
  if (e.where == object_placement::single_copy && e.owner != self_) {
    r.epoch = e.moves;
    send_request(r, e.owner);
    it->second.sent = std::move(r);
    return absl::OkStatus();
  }
  it->second.sent.reset();
  if (e.where == object_placement::replicated && op.kind == operation_kind::write) {
    return send_ordered(r.op, r.object, call, r.args);
  }
  // The caller decoded these bytes before it sent them.
  decoded_arguments args = op.unmarshal(r.args);
  const bool single = e.where == object_placement::single_copy;
  if (single) note_call(e, self_, op);
  execute(e, op, std::move(args), self_, call, /*logged=*/single, r.args);
  if (!single) return report_reads(e);
  return absl::OkStatus();
}

absl::Status object_table::wait_for_state(entry& e, const std::string& what) {
  const bool replica = e.where == object_placement::replicated;
  // A replica comes from the owner that switched the object to replicas (unless that is
  // this node, whose copy was itself still on its way); a copy from the owner before the
  // move here.
  const comm::node_id from = replica && e.owner != self_ ? e.owner : e.previous_owner;
  absl::StatusOr<bool> came = loop_.wait_until(absl::Now() + call_timeout_, [&] {
    if (e.state) return true;
    if (replica) return e.where != object_placement::replicated;
    return e.owner != self_ || e.where != object_placement::single_copy;
  });
  if (!came.ok()) return came.status();
  if (*came) return absl::OkStatus();
  return absl::DeadlineExceededError(absl::StrFormat(
      "%s on node %u: within %s, the object's %s did not come here from node %u", what, self_,
      absl::FormatDuration(call_timeout_), replica ? "replica" : "copy", from));
}

absl::Status object_table::report_reads(entry& e) {
  if (++e.unreported_reads < kReadsReport) return absl::OkStatus();
  const std::uint64_t reads = e.unreported_reads;
  e.unreported_reads = 0;
  return send_ordered(wire::kReadsOp, e.id, 0, std::as_bytes(std::span(&reads, 1)));
}

}  // namespace iso::runtime
