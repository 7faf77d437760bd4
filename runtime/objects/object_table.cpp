#include "runtime/objects/object_table.hpp"

#include <exception>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "iso/error.hpp"
#include "nicfw/credit_ledger.hpp"
#include "runtime/collective_digest.hpp"
#include "runtime/objects/object_wire.hpp"
#include "runtime/ordered/batch_framing.hpp"

namespace iso::runtime {

std::string describe(const object_id id, const std::string& type) {
  return absl::StrFormat("object %u (%s)", id, type);
}

std::string describe(const object_id id, const std::string& type, const operation& op) {
  return absl::StrFormat("object %u (%s), operation %u (%s)", id, type, op.id, op.name);
}

namespace {

namespace wire = objects_wire;

// Progress is forbidden while user code runs: a body or guard that waited would run other
// calls of the same object in the middle of this one.
class user_code_scope {
 public:
  explicit user_code_scope(event_loop& loop) : loop_(loop), was_(loop.forbidden_inside()) {
    loop_.forbid_progress("an operation's guard or body");
  }
  ~user_code_scope() { loop_.forbid_progress(was_); }
  user_code_scope(const user_code_scope&) = delete;
  user_code_scope& operator=(const user_code_scope&) = delete;

 private:
  event_loop& loop_;
  const char* was_;
};

std::string what_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    return ex.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

}  // namespace

object_table::object_table(event_loop& loop, std::unique_ptr<object_order> order,
                           comm::node_id self, std::uint32_t nodes, std::size_t max_direct)
    : loop_(loop), order_(std::move(order)), self_(self), nodes_(nodes), max_direct_(max_direct) {
  loop_.add_direct_unit(*this, static_cast<std::uint8_t>(direct_tag::objects));
}

object_table::~object_table() = default;

absl::StatusOr<std::unique_ptr<object_table::entry>> object_table::make_entry(
    object_id id, std::shared_ptr<const object_type::impl> type, const object_options& opts) const {
  // An automatic object whose hint says that reads dominate starts replicated.
  const bool starts_replicated =
      opts.placement == object_placement::automatic &&
      opts.reads_per_write >= static_cast<double>(kReplicateReadsPerWrite);
  if (opts.placement != object_placement::replicated &&
      opts.placement != object_placement::single_copy &&
      opts.placement != object_placement::automatic) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: placement %u is none of replicated, single_copy and automatic",
                        describe(id, type->name), static_cast<unsigned>(opts.placement)));
  }
  const bool single = opts.placement != object_placement::replicated;
  if (single && opts.owner >= nodes_) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: owner %u is not a node of the job (nodes 0..%u)",
                        describe(id, type->name), opts.owner, nodes_ - 1));
  }
  auto e = std::make_unique<entry>();
  e->id = id;
  e->where =
      single && !starts_replicated ? object_placement::single_copy : object_placement::replicated;
  e->owner = single ? opts.owner : 0;
  e->automatic = opts.placement == object_placement::automatic;
  e->offer_to = nodes_;
  e->uses.assign(nodes_, 0);
  e->writes_by.assign(nodes_, 0);
  e->state = state_ptr(nullptr, object_state_deleter{&type->state});
  e->initial_digest = collective_digest(collective_digest::kind::object).add(opts.initial).value();
  if (e->where == object_placement::replicated || opts.owner == self_) {
    try {
      e->state.reset(type->state.create(opts.initial));
    } catch (...) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: initial state: %s", describe(id, type->name), what_of(std::current_exception())));
    }
  }
  e->type = std::move(type);
  return e;
}

absl::StatusOr<object_id> object_table::create(std::shared_ptr<const object_type::impl> type,
                                               const object_options& opts) {
  absl::StatusOr<std::unique_ptr<entry>> e = make_entry(next_id_, std::move(type), opts);
  if (!e.ok()) return e.status();
  const object_id id = next_id_++;
  objects_[id] = *std::move(e);
  return id;
}

absl::StatusOr<std::uint64_t> object_table::register_type(
    std::shared_ptr<const object_type::impl> type) {
  auto [it, added] = types_.try_emplace(type->name, type);
  if (!added && it->second != type) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "object type %s: node %u has registered another type under that name", type->name, self_));
  }
  collective_digest d(collective_digest::kind::object);
  // The objects order too: a type registered under another order would never see the
  // creations by one node that travel in this one.
  d.add(static_cast<std::uint64_t>(order_->kind()));
  d.add(type->ops.size());
  for (const char c : type->name) d.add(static_cast<std::uint64_t>(c));
  for (const operation& op : type->ops) {
    d.add(static_cast<std::uint64_t>(op.kind)).add(op.alternatives.size());
  }
  return d.value();
}

absl::StatusOr<object_id> object_table::create_ordered(
    const std::shared_ptr<const object_type::impl>& type, const object_options& opts) {
  auto known = types_.find(type->name);
  if (known == types_.end() || known->second != type) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "object creation on node %u: type %s is not registered (register_object_type, on "
        "every node, before objects of it are created by one node)",
        self_, type->name));
  }
  // The checks every node would make, here first: nothing goes out that would fail there.
  object_options here = opts;
  here.placement = object_placement::replicated;  // builds the state, to check the bytes
  if (absl::Status s = make_entry(next_ordered_id_, type, opts).status(); !s.ok()) return s;
  if (absl::Status s = make_entry(next_ordered_id_, type, here).status(); !s.ok()) return s;
  const wire::create_header c{
      .placement = static_cast<std::uint8_t>(opts.placement),
      .order = static_cast<std::uint8_t>(order_->kind()),
      .starts_replicated = static_cast<std::uint8_t>(
          opts.reads_per_write >= static_cast<double>(kReplicateReadsPerWrite) ? 1 : 0),
      .owner = opts.owner,
      .name_length = static_cast<std::uint32_t>(type->name.size())};
  std::vector<std::byte> body = wire::frame(c, std::as_bytes(std::span(type->name)));
  body.insert(body.end(), opts.initial.begin(), opts.initial.end());
  const std::uint64_t call = next_call_++;
  pending_[call] = {};
  if (absl::Status s = send_ordered(wire::kCreateOp, 0, call, body); !s.ok()) {
    pending_.erase(call);
    return s;
  }
  absl::StatusOr<std::vector<std::byte>> id = wait(call);
  if (!id.ok()) return id.status();
  object_id out = 0;
  std::memcpy(&out, id->data(), sizeof(out));
  return out;
}

void object_table::apply_create(const ordered_delivery& d, std::uint64_t call) {
  const std::span<const std::byte> body = std::span(d.bytes).subspan(sizeof(wire::write_header));
  const std::optional<wire::create_header> c = wire::header_of<wire::create_header>(body);
  if (!c || body.size() - sizeof(wire::create_header) < c->name_length) {
    loop_.fail(absl::InvalidArgumentError(
        absl::StrFormat("ordered object creation of %u bytes from node %u is malformed",
                        d.bytes.size(), d.sender)));
    return;
  }
  const std::span<const std::byte> name_bytes =
      body.subspan(sizeof(wire::create_header), c->name_length);
  const std::string name(reinterpret_cast<const char*>(name_bytes.data()), name_bytes.size());
  const object_id id = next_ordered_id_++;
  auto type = types_.find(name);
  if (type == types_.end()) {
    loop_.fail(absl::FailedPreconditionError(absl::StrFormat(
        "object %u of type %s, created by node %u: the type is not registered on node %u", id, name,
        d.sender, self_)));
    return;
  }
  if (c->order != static_cast<std::uint8_t>(order_->kind())) {
    loop_.fail(absl::FailedPreconditionError(absl::StrFormat(
        "object %u of type %s, created by node %u under the %s objects order: node %u uses the "
        "%s order (options.object_order must be the same on every node)",
        id, name, d.sender, order_name(static_cast<order_kind>(c->order)), self_,
        order_name(order_->kind()))));
    return;
  }
  const std::span<const std::byte> initial =
      body.subspan(sizeof(wire::create_header) + c->name_length);
  absl::StatusOr<std::unique_ptr<entry>> e = make_entry(
      id, type->second,
      {.placement = static_cast<object_placement>(c->placement),
       .owner = c->owner,
       .initial = {initial.begin(), initial.end()},
       .reads_per_write =
           c->starts_replicated != 0 ? static_cast<double>(kReplicateReadsPerWrite) : 0.0});
  if (!e.ok()) {
    // The creator checked the same: only a node whose state functions disagree gets here.
    loop_.fail(e.status());
    return;
  }
  objects_[id] = *std::move(e);
  unpark(id);
  if (d.sender == self_) {
    outcome out;
    out.result.resize(sizeof(id));
    std::memcpy(out.result.data(), &id, sizeof(id));
    complete(call, std::move(out));
  }
}

absl::Status object_table::attach(object_id id, absl::Duration timeout) {
  if (id < kOrderedIds) {
    return find(id, "attach").status();
  }
  if (objects_.contains(id)) return absl::OkStatus();
  absl::StatusOr<bool> created =
      loop_.wait_until(absl::Now() + timeout, [&] { return objects_.contains(id); });
  if (!created.ok()) return created.status();
  if (*created) return absl::OkStatus();
  return absl::DeadlineExceededError(absl::StrFormat(
      "attach on node %u: object %u was not created here within %s (%u objects were created "
      "through the order so far)",
      self_, id, absl::FormatDuration(timeout), next_ordered_id_ - kOrderedIds));
}

std::uint64_t object_table::creation_digest(object_id id) const {
  const entry& e = *objects_.at(id);
  collective_digest d(collective_digest::kind::object);
  d.add(id).add(static_cast<std::uint64_t>(e.where)).add(e.owner).add(e.type->ops.size());
  d.add(e.automatic ? 1 : 0).add(static_cast<std::uint64_t>(order_->kind()));
  d.add(e.initial_digest);
  for (const char c : e.type->name) d.add(static_cast<std::uint64_t>(c));
  for (const operation& op : e.type->ops) {
    d.add(static_cast<std::uint64_t>(op.kind)).add(op.alternatives.size());
  }
  return d.value();
}

absl::StatusOr<object_table::entry*> object_table::find(object_id id, const char* what) const {
  auto it = objects_.find(id);
  if (it == objects_.end()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: object %u does not exist on node %u", what, id, self_));
  }
  return it->second.get();
}

const operation* object_table::operation_at(const entry& e, operation_id op) {
  return op < e.type->ops.size() && !e.type->ops[op].name.empty() ? &e.type->ops[op] : nullptr;
}

absl::StatusOr<const operation*> object_table::find_op(const entry& e, operation_id op) const {
  if (const operation* found = operation_at(e, op)) return found;
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: type %s has no operation %u", describe(e.id, e.type->name), e.type->name, op));
}

std::optional<object_table::outcome> object_table::attempt(entry& e, const operation& op,
                                                           const decoded_arguments& args) {
  const user_code_scope scope(loop_);
  const bool write = op.kind == operation_kind::write;
  const char* phase = "a guard";
  try {
    for (const alternative& alt : op.alternatives) {
      phase = "a guard";
      if (alt.guard && !alt.guard(e.state.get(), args)) continue;
      phase = "the body";
      outcome out;
      if (write && op.body_may_throw) {
        // The strong guarantee: a body that throws leaves the state as it was.
        state_ptr backup(e.type->state.clone(e.state.get()), object_state_deleter{&e.type->state});
        try {
          alt.body(e.state.get(), args, out.result);
        } catch (...) {
          e.state.swap(backup);
          throw;
        }
      } else {
        alt.body(e.state.get(), args, out.result);
      }
      if (write) ++e.writes;
      return out;
    }
  } catch (...) {
    return outcome::failure(
        absl::AbortedError(absl::StrFormat("%s: %s threw: %s", describe(e.id, e.type->name, op),
                                           phase, what_of(std::current_exception()))));
  }
  return std::nullopt;
}

void object_table::execute(entry& e, const operation& op, decoded_arguments args,
                           comm::node_id caller, std::uint64_t call, bool logged,
                           std::span<const std::byte> raw) {
  std::optional<outcome> out = attempt(e, op, args);
  if (!out) {
    waiting_call w{.op = op.id,
                   .args = std::move(args),
                   .caller = caller,
                   .call = call,
                   .logged = logged,
                   .raw = {}};
    if (e.where == object_placement::single_copy || e.automatic) {
      w.raw.assign(raw.begin(), raw.end());  // the call may have to move with a copy
    }
    e.queue.push_back(std::move(w));
    return;
  }
  const bool changed = op.kind == operation_kind::write && out->status.ok();
  resume(e, caller, call, *std::move(out));
  if (changed) walk_queue(e);
}

void object_table::walk_queue(entry& e) {
  bool again = true;
  while (again) {
    again = false;
    for (auto it = e.queue.begin(); it != e.queue.end();) {
      const operation& op = e.type->ops[it->op];
      std::optional<outcome> out = attempt(e, op, it->args);
      if (!out) {
        ++it;
        continue;
      }
      waiting_call w = std::move(*it);
      it = e.queue.erase(it);
      if (w.logged) {
        e.log.push_back({.caller = w.caller, .call = w.call, .op = w.op, .after_write = e.writes});
      }
      const bool changed = op.kind == operation_kind::write && out->status.ok();
      resume(e, w.caller, w.call, *std::move(out));
      if (changed) {
        again = true;  // the state changed: calls before this one may run now
        break;
      }
    }
  }
}

void object_table::resume(entry& e, comm::node_id caller, std::uint64_t call, outcome out) {
  if (caller == self_) {
    complete(call, std::move(out));
  } else if (e.where == object_placement::single_copy) {
    const std::size_t largest = max_direct_ - sizeof(wire::reply_header);
    if (out.status.ok() && out.result.size() > largest) {
      out = outcome::failure(absl::OutOfRangeError(absl::StrFormat(
          "%s: the call ran on node %u (what a write changed stays changed), but its result of "
          "%u bytes exceeds the largest reply of %u bytes",
          describe(e.id, e.type->name), self_, out.result.size(), largest)));
    }
    send_reply(caller, call, out, offer_for_call(e, caller));
  }
  // A replicated write resumes its caller at the caller's own replica.
}

void object_table::complete(std::uint64_t call, outcome out) {
  auto it = pending_.find(call);
  if (it == pending_.end()) return;  // the caller gave up (its node failed)
  if (it->second.abandoned) {
    if (it->second.offered) note_untaken_offer(it->second.object);
    pending_.erase(it);
    return;
  }
  it->second.done = true;
  it->second.out = std::move(out);
}

std::optional<absl::StatusOr<std::vector<std::byte>>> object_table::read_replica_now(
    object_id id, operation_id op_id, std::span<const std::byte> args) {
  if (loop_.progress_forbidden() || !redo_dropped_.empty()) return std::nullopt;
  // Looked up without find() and find_op(): their status costs this path a tenth of its
  // time, and a miss is start()'s to report.
  auto found = objects_.find(id);
  if (found == objects_.end()) return std::nullopt;
  entry& e = *found->second;
  if (e.where != object_placement::replicated || e.automatic || e.offer_untaken) {
    return std::nullopt;
  }
  const operation* op_found = operation_at(e, op_id);
  if (op_found == nullptr) return std::nullopt;
  const operation& op = *op_found;
  // Guarded reads take start(): a guard is evaluated once when its operation starts, and a
  // false one leaves the call waiting there.
  if (op.kind != operation_kind::read ||
      std::any_of(op.alternatives.begin(), op.alternatives.end(),
                  [](const alternative& alt) { return static_cast<bool>(alt.guard); })) {
    return std::nullopt;
  }
  decoded_arguments decoded;
  try {
    decoded = op.unmarshal(args);
  } catch (...) {
    return std::nullopt;  // start() says why
  }
  // As start(): writes already filed here are applied before the read.
  apply_delivered();
  if (e.where != object_placement::replicated || !e.state) return std::nullopt;
  std::optional<outcome> out = attempt(e, op, decoded);
  if (!out) return std::nullopt;  // no alternative at all: start() says so
  if (!out->status.ok()) return absl::StatusOr<std::vector<std::byte>>(out->status);
  return absl::StatusOr<std::vector<std::byte>>(std::move(out->result));
}

absl::StatusOr<std::vector<std::byte>> object_table::invoke(object_id id, operation_id op_id,
                                                            std::span<const std::byte> args,
                                                            bool read_path) {
  if (std::optional<absl::StatusOr<std::vector<std::byte>>> now =
          read_replica_now(id, op_id, args)) {
    return *std::move(now);
  }
  absl::StatusOr<std::uint64_t> call = start(id, op_id, args, read_path);
  if (!call.ok()) return call.status();
  return finish(*call);
}

absl::Status object_table::refuse_nested_call(object_id id, operation_id op_id) const {
  if (!loop_.progress_forbidden()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrFormat("object %u: operation %u called inside %s; operations cannot nest", id, op_id,
                      loop_.forbidden_inside()));
}

absl::StatusOr<std::uint64_t> object_table::start(object_id id, operation_id op_id,
                                                  std::span<const std::byte> args, bool read_path) {
  if (absl::Status s = refuse_nested_call(id, op_id); !s.ok()) return s;
  if (absl::Status s = dispatch_dropped(); !s.ok()) return s;
  absl::StatusOr<entry*> found = find(id, "object call");
  if (!found.ok()) return found.status();
  entry& e = **found;
  absl::StatusOr<const operation*> op_found = find_op(e, op_id);
  if (!op_found.ok()) return op_found.status();
  const operation& op = **op_found;
  if (read_path && op.kind == operation_kind::write) {
    return absl::FailedPreconditionError(absl::StrFormat("%s is a write; it was called as a read",
                                                         describe(e.id, e.type->name, op)));
  }
  // The caller decodes first: arguments that do not decode go nowhere.
  decoded_arguments decoded;
  try {
    decoded = op.unmarshal(args);
  } catch (...) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: arguments of %u bytes: %s",
                                                      describe(e.id, e.type->name, op), args.size(),
                                                      what_of(std::current_exception())));
  }
  if (e.offer_untaken) {
    // An offer that came with the reply to a dropped call: taken now, as it would have been.
    e.offer_untaken = false;
    if (e.owner != self_ && e.where == object_placement::single_copy) {
      if (absl::Status s = migrate(id, self_); !s.ok()) return s;
    }
  }
  const std::uint64_t call = next_call_++;
  pending_[call] = {.object = id};
  const bool write = op.kind == operation_kind::write;
  // Dispatched by the object's placement as it is when the call goes out: a wait below (for
  // a copy on its way) or the writes applied before a read may switch it, so look again.
  for (;;) {
    if (e.where == object_placement::replicated && write) {
      if (absl::Status s = send_ordered(op_id, id, call, args); !s.ok()) {
        pending_.erase(call);
        if (s.code() == absl::StatusCode::kOutOfRange) {
          return absl::InvalidArgumentError(
              absl::StrFormat("%s: %s", describe(e.id, e.type->name, op), s.message()));
        }
        return s;
      }
      break;
    }
    if (e.where == object_placement::replicated) {
      if (!e.state) {
        // Replicated by automatic placement: the replica may still be on its way here.
        if (absl::Status s = wait_for_state(e, describe(e.id, e.type->name, op)); !s.ok()) {
          pending_.erase(call);
          return s;
        }
        continue;
      }
      // Writes already filed here (under the isotach order, at a logical time this node has
      // passed, perhaps beside shared variables it has read) are applied before the read.
      apply_delivered();
      if (e.where != object_placement::replicated || !e.state) continue;
      execute(e, op, std::move(decoded), self_, call, /*logged=*/false, args);
      if (e.automatic) {
        if (absl::Status s = report_reads(e); !s.ok()) return s;
      }
      break;
    }
    // A copy on its way here: wait for it (or for it to move on, or to become replicas).
    if (e.owner == self_ && !e.state) {
      if (absl::Status s = wait_for_state(e, describe(e.id, e.type->name, op)); !s.ok()) {
        pending_.erase(call);
        return s;
      }
      continue;
    }
    if (e.owner == self_) {
      note_call(e, self_, op);
      execute(e, op, std::move(decoded), self_, call, /*logged=*/true, args);
      break;
    }
    if (sizeof(wire::request_header) + args.size() > max_direct_) {
      pending_.erase(call);
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: arguments of %u bytes exceed the largest request of %u bytes",
                          describe(e.id, e.type->name, op), args.size(),
                          max_direct_ - sizeof(wire::request_header)));
    }
    request r{.from = self_,
              .object = id,
              .op = op_id,
              .call = call,
              .args = {args.begin(), args.end()},
              .epoch = e.moves};
    send_request(r, e.owner);
    pending_[call].sent = std::move(r);
    // Sent now, as start() promises: a caller that goes on computing would otherwise
    // hold the request until its next call into the runtime.
    bool sent = false;
    if (absl::Status s = flush_outbox(sent); !s.ok()) return s;
    break;
  }
  return call;
}

absl::StatusOr<bool> object_table::poll(std::uint64_t call) {
  auto it = pending_.find(call);
  if (it == pending_.end()) return absl::NotFoundError("no such call");
  if (!it->second.done && !loop_.progress_forbidden()) {
    bool did_work = false;
    if (absl::Status s = loop_.progress(did_work); !s.ok()) return s;
    // Only when it need not wait: ready() never blocks; get() waits for the rest.
    if (it->second.redo && redo_ready(call)) {
      if (absl::Status s = redo(call); !s.ok()) return s;
    }
  }
  return it->second.done;
}

absl::StatusOr<std::vector<std::byte>> object_table::finish(std::uint64_t call) {
  auto it = pending_.find(call);
  if (it == pending_.end()) return absl::NotFoundError("no such call");
  const object_id id = it->second.object;
  bool offered = false;
  bool replicas = false;
  absl::StatusOr<std::vector<std::byte>> result = wait(call, &offered, &replicas);
  auto here = objects_.find(id);
  if (offered && here != objects_.end() && here->second->where == object_placement::single_copy) {
    // Automatic placement: this node uses the copy most; it moves here (unless the object
    // became replicated meanwhile).
    if (absl::Status s = migrate(id, self_); !s.ok()) return s;
  }
  if (here != objects_.end() && here->second->replicas_wanted && here->second->owner == self_ &&
      here->second->where == object_placement::single_copy) {
    replicas = true;  // the owner's own calls ask as its replies would
  }
  if (replicas) {
    // Automatic placement: reads dominate; every node gets a replica.
    if (absl::Status s = replicate(id); !s.ok()) return s;
  }
  return result;
}

void object_table::abandon(std::uint64_t call) {
  auto it = pending_.find(call);
  if (it == pending_.end()) return;
  if (!it->second.done) {
    // Kept until its result arrives (a request may still follow a moved copy), then dropped.
    it->second.abandoned = true;
    return;
  }
  if (it->second.offered) note_untaken_offer(it->second.object);
  pending_.erase(it);
}

void object_table::note_untaken_offer(object_id id) {
  if (auto e = objects_.find(id); e != objects_.end()) e->second->offer_untaken = true;
}

absl::StatusOr<std::vector<std::byte>> object_table::ordered_batch(
    operation_id op, object_id id, std::uint64_t call, std::span<const std::byte> body) const {
  const wire::write_header h{.object = id, .op = op, .call = call};
  std::vector<std::byte> message = wire::frame(h, body);
  const std::size_t limit = order_->max_batch() - kFrameBytes;
  if (message.size() > limit) {
    return absl::OutOfRangeError(absl::StrFormat(
        "%u bytes exceed the largest ordered write of %u bytes", body.size(), limit - sizeof(h)));
  }
  std::vector<std::byte> batch;
  batch.reserve(kFrameBytes + message.size());
  append_framed(batch, message);
  return batch;
}

absl::Status object_table::send_ordered(operation_id op, object_id id, std::uint64_t call,
                                        std::span<const std::byte> body) {
  absl::StatusOr<std::vector<std::byte>> batch = ordered_batch(op, id, call, body);
  if (!batch.ok()) return batch.status();
  return order_->send(*batch);
}

absl::StatusOr<std::vector<std::byte>> object_table::wait(std::uint64_t call, bool* offered,
                                                          bool* replicas) {
  auto it = pending_.find(call);
  while (!it->second.done) {
    bool late = false;
    if (absl::Status s = loop_.wait_for([&] {
          late = overdue(it->second);
          return it->second.done || it->second.redo || late;
        });
        !s.ok()) {
      pending_.erase(it);
      return s;
    }
    if (late && !it->second.done) return give_up(call);
    if (it->second.redo) {
      if (absl::Status s = redo(call); !s.ok()) {
        pending_.erase(call);  // redo() may have forgotten it already
        return s;
      }
    }
  }
  outcome out = std::move(it->second.out);
  if (offered != nullptr) *offered = it->second.offered;
  if (replicas != nullptr) *replicas = it->second.replicas_offered;
  pending_.erase(it);
  if (!out.status.ok()) return out.status;
  return std::move(out.result);
}

void object_table::apply_ordered(const ordered_delivery& d) {
  const std::optional<wire::write_header> h = wire::header_of<wire::write_header>(d.bytes);
  if (h && h->op == wire::kCreateOp) {
    apply_create(d, h->call);
    return;
  }
  // Automatic placement: an object whose replica is on its way here keeps its messages
  // until it arrives; one that became a single copy takes replicated writes as requests.
  if (h && hold_ordered(d, h->object, h->op)) return;
  if (h && h->op == wire::kMigrateOp) {
    apply_migrate(d, h->object, h->call);
    return;
  }
  if (h && h->op == wire::kReplicateOp) {
    apply_replicate(d, h->object, h->call);
    return;
  }
  if (h && h->op == wire::kReadsOp) {
    apply_reads(d, h->object);
    return;
  }
  if (h && ordered_to_single_copy(d, h->object, h->op, h->call)) return;
  absl::StatusOr<entry*> e =
      h ? find(h->object, "ordered write") : absl::InvalidArgumentError("ordered write too short");
  absl::StatusOr<const operation*> op =
      e.ok() ? find_op(**e, h->op) : absl::StatusOr<const operation*>(e.status());
  if (!op.ok()) {
    loop_.fail(absl::InvalidArgumentError(
        absl::StrFormat("ordered object write of %u bytes from node %u: %s", d.bytes.size(),
                        d.sender, op.status().message())));
    return;
  }
  entry& object = **e;
  decoded_arguments args;
  try {
    args = (*op)->unmarshal(std::span(d.bytes).subspan(sizeof(wire::write_header)));
  } catch (...) {
    // The caller decoded the same bytes before it sent them: an unmarshal that fails here is
    // not deterministic, and this replica would differ from the others from now on.
    loop_.fail(absl::AbortedError(absl::StrFormat(
        "%s: arguments of a write from node %u, which node %u decoded, do not decode here on "
        "node %u (%s): an unmarshal must decode the same bytes alike everywhere, or the "
        "replicas differ",
        describe(object.id, object.type->name, **op), d.sender, d.sender, self_,
        what_of(std::current_exception()))));
    return;
  }
  execute(object, **op, std::move(args), d.sender, h->call, /*logged=*/true,
          std::span(d.bytes).subspan(sizeof(wire::write_header)));
  if (object.automatic) note_ordered(object, d, **op);
}

void object_table::send_request(const request& r, comm::node_id to) {
  const wire::request_header h{.op = r.op, .object = r.object, .call = r.call, .epoch = r.epoch};
  outbox_.push_back({.to = to, .bytes = wire::frame(h, r.args)});
  if (auto it = pending_.find(r.call); it != pending_.end()) {
    it->second.asked = absl::Now();
    it->second.asked_node = to;
    it->second.acknowledged = false;
  }
}

void object_table::send_accepted(const request& r) {
  const wire::reply_header h{.kind = wire::packet_kind::accepted, .call = r.call};
  outbox_.push_back({.to = r.from, .bytes = wire::frame(h, {})});
}

bool object_table::overdue(const pending_call& p) const {
  return p.sent && !p.acknowledged && absl::Now() - p.asked > call_timeout_;
}

absl::Status object_table::give_up(std::uint64_t call) {
  pending_call& p = pending_.at(call);
  p.abandoned = true;  // kept until an answer comes, which is then discarded
  p.given_up = true;
  const request& r = *p.sent;
  std::string what = absl::StrFormat("object %u", r.object);
  if (auto e = objects_.find(r.object); e != objects_.end()) {
    const operation* op =
        r.op < e->second->type->ops.size() ? &e->second->type->ops[r.op] : nullptr;
    what = op != nullptr ? describe(r.object, e->second->type->name, *op)
                         : describe(r.object, e->second->type->name);
  }
  return absl::DeadlineExceededError(absl::StrFormat(
      "%s, called on node %u: its owner, node %u, gave no sign of life within %s (it has "
      "neither answered nor queued the call: it computes without calling into the runtime, "
      "or is stopped); the call may still run there, and its result is then discarded",
      what, self_, p.asked_node, absl::FormatDuration(call_timeout_)));
}

void object_table::serve(request r) {
  if (r.object >= next_ordered_id_ && !objects_.contains(r.object)) {
    park_request(std::move(r));
    return;
  }
  absl::StatusOr<entry*> e = find(r.object, "object request");
  absl::StatusOr<const operation*> op =
      e.ok() ? find_op(**e, r.op) : absl::StatusOr<const operation*>(e.status());
  if (!op.ok()) {
    send_reply(r.from, r.call, outcome::failure(op.status()));
    return;
  }
  entry& object = **e;
  // A move the caller knows of and this node not yet, or a copy still on its way here.
  if (r.epoch > object.moves || (object.owner == self_ && !object.state)) {
    send_accepted(r);  // alive, and keeping the call until it can run it here or send it on
    object.deferred.push_back(std::move(r));
    return;
  }
  if (object.where == object_placement::replicated || object.owner != self_) {
    const bool replicated = object.where == object_placement::replicated;
    const wire::reply_header h{.kind = wire::packet_kind::moved,
                               .owner = replicated ? wire::kReplicatedOwner : object.owner,
                               .call = r.call,
                               .epoch = object.moves};
    outbox_.push_back({.to = r.from, .bytes = wire::frame(h, {})});
    return;
  }
  decoded_arguments args;
  try {
    args = (*op)->unmarshal(r.args);
  } catch (...) {
    send_reply(r.from, r.call,
               outcome::failure(absl::InvalidArgumentError(absl::StrFormat(
                   "%s: arguments: %s", describe(object.id, object.type->name, **op),
                   what_of(std::current_exception())))));
    return;
  }
  note_call(object, r.from, **op);
  const std::size_t waiting = object.queue.size();
  execute(object, **op, std::move(args), r.from, r.call, /*logged=*/true, r.args);
  // A call whose guards are all false waits here: its caller learns that it may wait.
  if (object.queue.size() > waiting) send_accepted(r);
}

void object_table::send_reply(comm::node_id to, std::uint64_t call, const outcome& out,
                              std::uint8_t offer) {
  wire::reply_header h{
      .code = static_cast<std::uint8_t>(out.status.code()), .offer = offer, .call = call};
  if (out.status.ok()) {
    std::span<const std::byte> body = out.result;
    if (sizeof(h) + body.size() > max_direct_) {
      h.code = static_cast<std::uint8_t>(absl::StatusCode::kOutOfRange);
      const std::string why =
          absl::StrFormat("result of %u bytes exceeds the largest reply of %u bytes", body.size(),
                          max_direct_ - sizeof(h));
      outbox_.push_back({.to = to, .bytes = wire::frame(h, std::as_bytes(std::span(why)))});
      return;
    }
    outbox_.push_back({.to = to, .bytes = wire::frame(h, body)});
    return;
  }
  std::string why(out.status.message().substr(0, max_direct_ - sizeof(h)));
  outbox_.push_back({.to = to, .bytes = wire::frame(h, std::as_bytes(std::span(why)))});
}

void object_table::on_reply(std::span<const std::byte> bytes) {
  const std::optional<wire::reply_header> h = wire::header_of<wire::reply_header>(bytes);
  const std::span<const std::byte> body = bytes.subspan(sizeof(wire::reply_header));
  outcome out;
  if (h->code == 0) {
    out.result.assign(body.begin(), body.end());
  } else {
    out.status = absl::Status(static_cast<absl::StatusCode>(h->code),
                              std::string(reinterpret_cast<const char*>(body.data()), body.size()));
  }
  if (h->offer != 0) {
    if (auto it = pending_.find(h->call); it != pending_.end()) {
      it->second.offered = h->offer == wire::kOfferCopy;
      it->second.replicas_offered = h->offer == wire::kOfferReplicas;
    }
  }
  complete(h->call, std::move(out));
}

void object_table::on_delivery(const nicfw::delivery& d) {
  nicfw::credit_ledger& credits = loop_.nic().credits();
  credits.host_received(d.source, nicfw::credit_class::direct, d.payload.size());
  const std::size_t size = d.payload.size();
  const auto kind = size >= 2 ? static_cast<wire::packet_kind>(d.payload[1]) : wire::packet_kind{};
  if (kind == wire::packet_kind::request && size >= sizeof(wire::request_header)) {
    const wire::request_header r = *wire::header_of<wire::request_header>(d.payload);
    const std::span<const std::byte> args = d.payload.subspan(sizeof(r));
    requests_.push_back({.from = d.source,
                         .object = r.object,
                         .op = r.op,
                         .call = r.call,
                         .args = {args.begin(), args.end()},
                         .epoch = r.epoch});
  } else if (kind == wire::packet_kind::reply && size >= sizeof(wire::reply_header)) {
    on_reply(d.payload);
  } else if (kind == wire::packet_kind::moved && size >= sizeof(wire::reply_header)) {
    on_moved(d.payload);
  } else if (kind == wire::packet_kind::accepted && size >= sizeof(wire::reply_header)) {
    const wire::reply_header h = *wire::header_of<wire::reply_header>(d.payload);
    if (auto it = pending_.find(h.call); it != pending_.end()) it->second.acknowledged = true;
  } else if (kind == wire::packet_kind::transfer && size >= sizeof(wire::transfer_header)) {
    transfers_.emplace_back(d.payload.begin(), d.payload.end());
  } else {
    loop_.fail(malformed_direct_packet(d));
  }
  // Copied out: the sender's buffer space is free again.
  credits.host_free(d.source, nicfw::credit_class::direct, size + nicfw::kPacketOverhead);
}

absl::Status object_table::flush_outbox(bool& did_work) {
  nicfw::credit_ledger& credits = loop_.nic().credits();
  while (!outbox_.empty()) {
    outgoing& o = outbox_.front();
    if (!credits.host_may_send(o.to, nicfw::credit_class::direct, o.bytes.size())) {
      credits.host_want(o.to, nicfw::credit_class::direct, o.bytes.size());
      return absl::OkStatus();  // a later round sends it, FIFO kept
    }
    credits.host_consume(o.to, nicfw::credit_class::direct, o.bytes.size());
    const comm::byte_span pieces[] = {o.bytes};
    if (absl::Status s = loop_.submit(nicfw::submission_kind::direct, o.to, pieces); !s.ok()) {
      return s;
    }
    outbox_.pop_front();
    did_work = true;
  }
  return absl::OkStatus();
}

bool object_table::apply_delivered() {
  std::deque<ordered_delivery>& inbox = order_->inbox();
  bool any = false;
  while (!inbox.empty()) {
    const ordered_delivery d = std::move(inbox.front());
    inbox.pop_front();
    apply_ordered(d);
    any = true;
  }
  return any;
}

absl::Status object_table::end_round(std::uint64_t closed, bool& did_work) {
  (void)closed;
  if (apply_delivered()) did_work = true;
  while (!transfers_.empty()) {
    std::vector<std::byte> packet = std::move(transfers_.front());
    transfers_.pop_front();
    on_transfer(std::move(packet));
    did_work = true;
  }
  while (!requests_.empty()) {
    request r = std::move(requests_.front());
    requests_.pop_front();
    serve(std::move(r));
    did_work = true;
  }
  if (parked_calls_ != 0) expire_parked(did_work);
  return flush_outbox(did_work);
}

absl::StatusOr<std::vector<std::byte>> object_table::state_bytes(object_id id) const {
  absl::StatusOr<entry*> e = find(id, "state_bytes");
  if (!e.ok()) return e.status();
  if (!(*e)->state) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: node %u keeps no copy (the single copy is on node %u)",
                        describe(id, (*e)->type->name), self_, (*e)->owner));
  }
  return (*e)->type->state.save((*e)->state.get());
}

absl::StatusOr<std::uint64_t> object_table::writes_applied(object_id id) const {
  absl::StatusOr<entry*> e = find(id, "writes_applied");
  if (!e.ok()) return e.status();
  if (!(*e)->state) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: node %u keeps no copy (the single copy is on node %u)",
                        describe(id, (*e)->type->name), self_, (*e)->owner));
  }
  return (*e)->writes;
}

absl::StatusOr<std::size_t> object_table::waiting_calls(object_id id) const {
  absl::StatusOr<entry*> e = find(id, "waiting_calls");
  if (!e.ok()) return e.status();
  return (*e)->queue.size();
}

absl::StatusOr<std::vector<resumed_call>> object_table::resume_log(object_id id) const {
  absl::StatusOr<entry*> e = find(id, "resume_log");
  if (!e.ok()) return e.status();
  return (*e)->log;
}

absl::StatusOr<object_placement> object_table::placement_of(object_id id) const {
  absl::StatusOr<entry*> e = find(id, "placement");
  if (!e.ok()) return e.status();
  return (*e)->automatic ? object_placement::automatic : (*e)->where;
}

absl::StatusOr<object_placement> object_table::current_placement_of(object_id id) const {
  absl::StatusOr<entry*> e = find(id, "placement");
  if (!e.ok()) return e.status();
  return (*e)->where;
}

absl::StatusOr<comm::node_id> object_table::owner_of(object_id id) const {
  absl::StatusOr<entry*> e = find(id, "owner");
  if (!e.ok()) return e.status();
  return (*e)->where == object_placement::replicated ? self_ : (*e)->owner;
}

absl::StatusOr<const std::string*> object_table::type_name(object_id id) const {
  absl::StatusOr<entry*> e = find(id, "type_name");
  if (!e.ok()) return e.status();
  return &(*e)->type->name;
}

absl::StatusOr<const operation*> object_table::operation_of(object_id id, operation_id op) const {
  absl::StatusOr<entry*> e = find(id, "call");
  if (!e.ok()) return e.status();
  return find_op(**e, op);
}

}  // namespace iso::runtime
