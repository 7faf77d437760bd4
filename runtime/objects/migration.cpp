// Migration of a single copy (iso::object::migrate): the move is a message of the objects
// order, so every node changes the object's owner at the same point. The node that holds
// the copy when it learns that it no longer owns it ships it (state and waiting calls) to
// the owner it knows; a node that receives a copy it no longer owns ships it on. Requests
// that reach a node which is not the owner get a `moved` answer and follow the copy; a
// request that knows of more moves than the node it reaches waits there until that node
// has applied them, and one for a copy still on its way waits for it. For an object created
// through the order, a request or a copy that reaches a node before it has applied the
// creation waits for that too, for a bounded time (before_creation.cpp).
#include <cstring>
#include <utility>

#include "absl/strings/str_format.h"
#include "runtime/objects/object_table.hpp"
#include "runtime/objects/object_wire.hpp"

namespace iso::runtime {
namespace {

namespace wire = objects_wire;

}  // namespace

absl::Status object_table::migrate(object_id id, comm::node_id to) {
  absl::StatusOr<entry*> found = find(id, "migrate");
  if (!found.ok()) return found.status();
  const entry& e = **found;
  if (e.where != object_placement::single_copy) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "migrate object %u (%s): it is replicated; only a single copy moves", id, e.type->name));
  }
  if (to >= nodes_) {
    return absl::InvalidArgumentError(
        absl::StrFormat("migrate object %u (%s): node %u is not a node of the job (nodes 0..%u)",
                        id, e.type->name, to, nodes_ - 1));
  }
  if (!e.type->state.save || !e.type->state.load) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "migrate object %u (%s): its type has no save and load for its state", id, e.type->name));
  }
  const std::uint64_t call = next_call_++;
  pending_[call] = {};
  const auto target = static_cast<std::uint32_t>(to);
  if (absl::Status s =
          send_ordered(wire::kMigrateOp, id, call, std::as_bytes(std::span(&target, 1)));
      !s.ok()) {
    pending_.erase(call);
    return s;
  }
  return wait(call).status();
}

void object_table::apply_migrate(const ordered_delivery& d, object_id id, std::uint64_t call) {
  const std::span<const std::byte> body = std::span(d.bytes).subspan(sizeof(wire::write_header));
  std::uint32_t to = 0;
  absl::StatusOr<entry*> e = find(id, "migration");
  if (!e.ok() || body.size() != sizeof(to)) {
    loop_.fail(absl::InvalidArgumentError(absl::StrFormat(
        "ordered migration of %u bytes from node %u is malformed or names no object here",
        d.bytes.size(), d.sender)));
    return;
  }
  std::memcpy(&to, body.data(), sizeof(to));
  if (to >= nodes_) {
    loop_.fail(absl::InvalidArgumentError(absl::StrFormat(
        "ordered migration from node %u moves object %u to node %u, outside the job", d.sender, id,
        to)));
    return;
  }
  entry& object = **e;
  if (object.where == object_placement::replicated) {
    // An automatic object replicated since the move was asked for: there is no copy to move.
    if (d.sender == self_) complete(call, {});
    return;
  }
  // A second move to the same node keeps where the copy on its way comes from.
  if (object.owner != to) object.previous_owner = object.owner;
  object.owner = to;
  ++object.moves;
  reset_uses(object);
  // The holder ships; a copy that arrived early may be installed now.
  if (object.state && to != self_) ship(object);
  install_early(object);
  retry_deferred(object);
  if (d.sender == self_) complete(call, {});
}

std::vector<std::byte> object_table::packed_copy(const entry& e, bool replica) const {
  const std::vector<std::byte> saved = e.type->state.save(e.state.get());
  wire::transfer_header h{.replica = static_cast<std::uint8_t>(replica ? 1 : 0),
                          .waiting = static_cast<std::uint32_t>(e.queue.size()),
                          .object = e.id,
                          .epoch = e.moves,
                          .writes = e.writes,
                          .state_bytes = saved.size()};
  std::vector<std::byte> packet = wire::frame(h, saved);
  for (const waiting_call& w : e.queue) {
    const wire::transfer_call c{.op = w.op,
                                .caller = w.caller,
                                .call = w.call,
                                .args_bytes = static_cast<std::uint32_t>(w.raw.size()),
                                .logged = w.logged ? 1U : 0U};
    const std::vector<std::byte> framed = wire::frame(c, w.raw);
    packet.insert(packet.end(), framed.begin(), framed.end());
  }
  return packet;
}

void object_table::ship(entry& e) {
  std::vector<std::byte> packet = packed_copy(e, /*replica=*/false);
  if (packet.size() > max_direct_) {
    loop_.fail(absl::ResourceExhaustedError(absl::StrFormat(
        "object %u (%s): its copy (%u bytes with its waiting calls) exceeds the largest "
        "packet of %u bytes and cannot migrate to node %u",
        e.id, e.type->name, packet.size(), max_direct_, e.owner)));
    return;
  }
  e.state.reset();
  e.queue.clear();
  outbox_.push_back({.to = e.owner, .bytes = std::move(packet)});
}

void object_table::on_transfer(std::vector<std::byte> packet) {
  const std::optional<wire::transfer_header> h = wire::header_of<wire::transfer_header>(packet);
  if (h->object >= next_ordered_id_) {
    // Created through the order, and shipped by a node that applied that creation (and the
    // move or switch after it) before this node did: installed once it is applied here.
    park_transfer(h->object, std::move(packet));
    return;
  }
  absl::StatusOr<entry*> e = find(h->object, "migration");
  if (!e.ok()) {
    loop_.fail(e.status());
    return;
  }
  entry& object = **e;
  if (h->epoch > object.moves) {
    object.early_transfers[h->epoch] = std::move(packet);  // installed at that move
    return;
  }
  if (h->replica != 0) {
    install_replica(object, packet);
    return;
  }
  install(object, packet);
  if (!object.state) return;  // a malformed copy failed the node
  if (object.replicate_on_arrival) {
    // The object became replicated while this copy was on its way: it is the first replica.
    object.replicate_on_arrival = false;
    ship_replicas(object);
    apply_held(object);  // writes ordered since the switch, held until the copy came
    retry_deferred(object);
    return;
  }
  if (object.owner != self_) {
    ship(object);  // it moved on while on its way here
  } else {
    walk_queue(object);
  }
  retry_deferred(object);
}

void object_table::install_early(entry& e) {
  while (!e.early_transfers.empty() && e.early_transfers.begin()->first <= e.moves) {
    auto early = e.early_transfers.extract(e.early_transfers.begin());
    on_transfer(std::move(early.mapped()));
  }
}

void object_table::install(entry& e, std::span<const std::byte> packet) {
  const wire::transfer_header h = *wire::header_of<wire::transfer_header>(packet);
  std::span<const std::byte> rest = packet.subspan(sizeof(h));
  auto malformed = [&] {
    loop_.fail(absl::InvalidArgumentError(
        absl::StrFormat("object %u (%s): a migrating copy of %u bytes is malformed", e.id,
                        e.type->name, packet.size())));
  };
  if (rest.size() < h.state_bytes) return malformed();
  state_ptr state(nullptr, object_state_deleter{&e.type->state});
  std::deque<waiting_call> queue;
  try {
    state.reset(e.type->state.load(rest.first(h.state_bytes)));
    rest = rest.subspan(h.state_bytes);
    for (std::uint32_t i = 0; i < h.waiting; ++i) {
      const std::optional<wire::transfer_call> c = wire::header_of<wire::transfer_call>(rest);
      if (!c || rest.size() - sizeof(*c) < c->args_bytes) return malformed();
      const std::span<const std::byte> raw = rest.subspan(sizeof(*c), c->args_bytes);
      rest = rest.subspan(sizeof(*c) + c->args_bytes);
      absl::StatusOr<const operation*> op = find_op(e, c->op);
      if (!op.ok()) return malformed();
      queue.push_back({.op = c->op,
                       .args = (*op)->unmarshal(raw),
                       .caller = c->caller,
                       .call = c->call,
                       .logged = c->logged != 0,
                       .raw = {raw.begin(), raw.end()}});
    }
  } catch (...) {
    return malformed();
  }
  e.state = std::move(state);
  e.queue = std::move(queue);
  e.writes = h.writes;
}

bool object_table::is_read(const request& r) const {
  auto found = objects_.find(r.object);
  if (found == objects_.end()) return false;
  const auto& ops = found->second->type->ops;
  return r.op < ops.size() && ops[r.op].kind == operation_kind::read;
}

void object_table::on_moved(std::span<const std::byte> bytes) {
  const wire::reply_header h = *wire::header_of<wire::reply_header>(bytes);
  auto it = pending_.find(h.call);
  if (it == pending_.end() || !it->second.sent) return;  // the caller gave up
  request& r = *it->second.sent;
  r.epoch = std::max(r.epoch, h.epoch);
  if (h.owner == wire::kReplicatedOwner) {
    if (it->second.abandoned && is_read(r)) {
      // It ran nowhere and changes nothing, and nobody wants its result.
      if (it->second.offered) note_untaken_offer(it->second.object);
      pending_.erase(it);
      return;
    }
    it->second.redo = true;  // the caller dispatches it again, as the object is now
    if (it->second.abandoned) redo_dropped_.push_back(h.call);
    return;
  }
  if (h.owner == self_) {
    requests_.push_back(r);  // served here, once this node has the copy
  } else {
    send_request(r, h.owner);
  }
}

void object_table::retry_deferred(entry& e) {
  std::vector<request> waiting = std::move(e.deferred);
  e.deferred.clear();
  for (request& r : waiting) requests_.push_back(std::move(r));
}

}  // namespace iso::runtime
