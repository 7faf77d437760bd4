// A node's shared objects (include/iso/object.hpp): the table of objects with this node's
// replica (or the single copy it owns), each object's FIFO queue of waiting calls, and the
// dispatch of a call: run here, request it from the owner, or put it in the job-wide order.
//
//   object_table& t = state.objects();                   // built on first use
//   absl::StatusOr<iso::object_id> id = t.create(type, opts);   // on every node, in order
//   absl::StatusOr<std::vector<std::byte>> r = t.invoke(*id, op, args, false);
//
// It is a unit of the node's event loop: every round it applies the writes the objects
// order delivered, serves the requests that arrived for copies it owns, and sends the
// replies it owes, so all of that happens while any wait of the node makes progress (not
// only while a call of this table waits). Operation bodies run with progress forbidden.
//
// Determinism: objects by id in an ordered map; a queue is walked in FIFO order after each
// write, from its front again after every write it resumes, until no waiting call can run.
// Replicas of an object see the same writes in the same order, so they resume the same
// ordered calls at the same points.
//
// One thread uses it (the node's application thread).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <typeinfo>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "iso/object.hpp"
#include "runtime/objects/object_order.hpp"
#include "runtime/progress/event_loop.hpp"

namespace iso::runtime {

// How errors name an object ("object 7 (Int)") and an operation of it.
[[nodiscard]] std::string describe(object_id id, const std::string& type);
[[nodiscard]] std::string describe(object_id id, const std::string& type, const operation& op);

// Destroys a state the way its type says.
struct object_state_deleter {
  const state_functions* functions = nullptr;
  void operator()(void* s) const {
    if (s != nullptr) functions->destroy(s);
  }
};

class object_table final : public delivery_unit {
 public:
  // Registers with `loop`; writes of replicated objects, creations by one node and
  // migrations go through `order` (opened with every node of the job as members before any
  // node sends in it: the table is built during the first collective creation, before its
  // rendezvous, and every node's order must be of one kind: creation_digest() holds it).
  object_table(event_loop& loop, std::unique_ptr<object_order> order, comm::node_id self,
               std::uint32_t nodes, std::size_t max_direct);
  object_table(const object_table&) = delete;
  object_table& operator=(const object_table&) = delete;
  ~object_table() override;

  // The local part of a collective creation: the next id, and this node's replica (or the
  // single copy, on its owner). InvalidArgument for an owner outside the job or initial
  // bytes the state rejects.
  [[nodiscard]] absl::StatusOr<object_id> create(std::shared_ptr<const object_type::impl> type,
                                                 const object_options& opts);
  // What every node must agree on about object `id` (for the creation's rendezvous).
  [[nodiscard]] std::uint64_t creation_digest(object_id id) const;
  // Makes `type` known here by its name (see iso::register_object_type); its digest for the
  // rendezvous. InvalidArgument for another type under a registered name.
  [[nodiscard]] absl::StatusOr<std::uint64_t> register_type(
      std::shared_ptr<const object_type::impl> type);
  // Creation by this node alone, through the objects order: the new id once this node has
  // applied it (ids from kOrderedIds up, in the order).
  [[nodiscard]] absl::StatusOr<object_id> create_ordered(
      const std::shared_ptr<const object_type::impl>& type, const object_options& opts);
  // Moves single copy `id` to `to` through the objects order; returns once applied here.
  [[nodiscard]] absl::Status migrate(object_id id, comm::node_id to);
  // Waits until object `id` exists here (its creation applied), for at most `timeout`.
  [[nodiscard]] absl::Status attach(object_id id, absl::Duration timeout);
  static constexpr object_id kOrderedIds = object_id{1} << 62;
  // Automatic placement: a single copy becomes replicated when its reads are at least this
  // many times its writes (replication_switch.cpp); a hint at or above it starts replicated.
  static constexpr std::uint64_t kReplicateReadsPerWrite = 4;

  // Runs a call and waits for its result (see iso::object::invoke). `read_path`: the call
  // came through invoke_read().
  [[nodiscard]] absl::StatusOr<std::vector<std::byte>> invoke(object_id id, operation_id op,
                                                              std::span<const std::byte> args,
                                                              bool read_path);

  // The same in two steps (see iso::object::start): start() dispatches the call and returns
  // its number (it waits only for a single copy on its way here, or to take a copy offered
  // to this node); poll() makes progress once and says whether the call is done; finish()
  // waits for it and returns its outcome (taking a copy its reply offered); abandon() drops
  // a call not finished: its outcome is discarded when it arrives. finish(), poll() and
  // abandon() take each call once started and not yet finished or abandoned.
  [[nodiscard]] absl::StatusOr<std::uint64_t> start(object_id id, operation_id op,
                                                    std::span<const std::byte> args,
                                                    bool read_path);
  // A write of a replicated object into this node's open isochron (see
  // iso::object::start(isochron&, ...)): checked here (FailedPrecondition naming the object
  // and operation for a single copy, the sequencer order, a read, a guarded operation, or
  // `isochron_problem` when that is not OK: the isochron is not this node's open one), its
  // arguments decoded, then added to the isochron; the number of a call that completes
  // when this node's replica applies it, after the isochron is issued.
  [[nodiscard]] absl::StatusOr<std::uint64_t> start_in_isochron(
      object_id id, operation_id op, std::span<const std::byte> args,
      const absl::Status& isochron_problem);
  [[nodiscard]] absl::StatusOr<bool> poll(std::uint64_t call);
  // Dropped calls that must go out again (their single copy became replicated before its
  // owner ran them: it answered "moved"), so that a dropped write is applied once even if
  // this node never calls an object again (dropped_calls.cpp). dispatch_ready_dropped():
  // those that can go out now, in the order they came, without waiting for a copy (the
  // node's polls). settle_dropped(): before this node leaves the job, waits for the answer
  // to each dropped request still unanswered and dispatches every dropped call told to go
  // out again; a call its owner keeps (its guard false) or one already in the order needs
  // nothing more. DeadlineExceeded naming object, operation and owner for a request left
  // unanswered past the call timeout, and for a call told to go out again that cannot within
  // the call timeout (this node did not apply the move or get the copy): that call is lost,
  // reported once and forgotten.
  [[nodiscard]] absl::Status dispatch_ready_dropped();
  [[nodiscard]] absl::Status settle_dropped();
  [[nodiscard]] absl::StatusOr<std::vector<std::byte>> finish(std::uint64_t call);
  void abandon(std::uint64_t call);

  // Reading a state in place (inspection.cpp; iso::object::inspect): this node's state of
  // object `id`, once the writes delivered here are applied (waiting for a replica or a
  // copy on its way here), as a read operation would see it; from then until
  // end_inspection() the node makes no progress. Inside another inspection it neither
  // waits nor applies anything (the outer one's function holds its state). InvalidArgument:
  // no such object, or a state whose type is not `want`; FailedPrecondition: the single
  // copy is on another node, or an inspection inside a guard, body or message handler.
  [[nodiscard]] absl::StatusOr<const void*> begin_inspection(object_id id,
                                                             const std::type_info& want);
  void end_inspection();
  [[nodiscard]] bool inspecting() const { return inspections_ != 0; }
  // FailedPrecondition naming the inspected object when `what` (a call that may wait or
  // change an object) comes inside an inspection; OK otherwise.
  [[nodiscard]] absl::Status refuse_inside_inspection(const char* what) const;

  [[nodiscard]] absl::StatusOr<std::vector<std::byte>> state_bytes(object_id id) const;
  [[nodiscard]] absl::StatusOr<std::uint64_t> writes_applied(object_id id) const;
  [[nodiscard]] absl::StatusOr<std::size_t> waiting_calls(object_id id) const;
  [[nodiscard]] absl::StatusOr<std::vector<resumed_call>> resume_log(object_id id) const;
  [[nodiscard]] absl::StatusOr<object_placement> placement_of(object_id id) const;
  // Replicated or single_copy: where an automatic object is now, as this node applied it.
  [[nodiscard]] absl::StatusOr<object_placement> current_placement_of(object_id id) const;
  [[nodiscard]] absl::StatusOr<comm::node_id> owner_of(object_id id) const;
  [[nodiscard]] absl::StatusOr<const std::string*> type_name(object_id id) const;
  // Operation `op` of object `id`'s type (InvalidArgument naming what is missing).
  [[nodiscard]] absl::StatusOr<const operation*> operation_of(object_id id, operation_id op) const;
  [[nodiscard]] order_kind order() const { return order_->kind(); }
  // How long a request to an owner waits for a sign of life (options::object_call_timeout).
  void set_call_timeout(absl::Duration timeout) { call_timeout_ = timeout; }
  // Calls and copies kept for objects whose creation this node has not applied yet (see
  // before_creation_): how many now, and how many calls of one caller at most.
  [[nodiscard]] std::size_t parked_before_creation() const {
    return parked_calls_ + parked_copies_;
  }
  static constexpr std::size_t kMaxParkedCalls = 1024;

  void on_delivery(const nicfw::delivery& d) override;
  [[nodiscard]] absl::Status end_round(std::uint64_t closed, bool& did_work) override;

 private:
  using state_ptr = std::unique_ptr<void, object_state_deleter>;
  // A request for a copy of ours, copied out of the NIC's queue.
  struct request {
    comm::node_id from = 0;
    std::uint64_t object = 0;
    operation_id op = 0;
    std::uint64_t call = 0;
    std::vector<std::byte> args;
    std::uint64_t epoch = 0;  // migrations the caller knew of
  };
  // A call whose guards were all false: what to retry, and whom to resume.
  struct waiting_call {
    operation_id op = 0;
    decoded_arguments args;
    comm::node_id caller = 0;
    std::uint64_t call = 0;
    bool logged = false;         // in every replica's queue (resume_log())
    std::vector<std::byte> raw;  // single copy: the argument bytes, should it migrate
  };
  struct entry {
    object_id id = 0;
    std::shared_ptr<const object_type::impl> type;
    object_placement where = object_placement::replicated;
    comm::node_id owner = 0;
    // The owner before the last move: where a copy on its way to this node comes from.
    comm::node_id previous_owner = 0;
    state_ptr state;
    // The initial bytes it was created with, for the nodes to compare (creation_digest).
    std::uint64_t initial_digest = 0;
    std::uint64_t writes = 0;
    std::deque<waiting_call> queue;
    std::vector<resumed_call> log;
    // Migration (single copy): moves applied here; requests that wait for a move or for
    // the copy to arrive; a copy that arrived before the move that sent it was applied.
    std::uint64_t moves = 0;
    // Automatic placement, on the owner: calls run per calling node since the last
    // decision, and the node offered the copy (none: nodes_).
    bool automatic = false;
    std::vector<std::uint64_t> uses;
    std::uint64_t counted = 0;
    comm::node_id offer_to = 0;
    bool offer_sent = false;
    // Here: an offer of the copy came with the reply to a dropped call; the next call takes it.
    bool offer_untaken = false;
    std::vector<request> deferred;
    // Copies that arrived before the moves that sent them were applied, by the move each
    // was sent at: a lagging node may hold more than one (a replica, then the copy of a
    // later migration to it).
    std::map<std::uint64_t, std::vector<std::byte>> early_transfers;
    // Automatic switching between a single copy and replicas (replication_switch.cpp).
    // Reads and writes since the last decision: counted by the owner of a single copy, and
    // by every replica from the order (writes by sender; reads as nodes report them).
    std::uint64_t window_reads = 0;
    std::uint64_t window_writes = 0;
    std::vector<std::uint64_t> writes_by;
    // Replicated: this node's reads not yet reported through the order.
    std::uint64_t unreported_reads = 0;
    // Owner of a single copy: reads dominate; replies ask their callers to replicate it.
    bool replicas_wanted = false;
    // Owner: the object became replicated while its copy was on its way here.
    bool replicate_on_arrival = false;
    // Replicated here, its replica not yet arrived: ordered messages for it, kept in order.
    std::vector<ordered_delivery> held;
  };
  // The outcome of a call that ran (its result or why it failed).
  struct outcome {
    absl::Status status;
    std::vector<std::byte> result;
    static outcome failure(absl::Status s) {
      outcome o;
      o.status = std::move(s);
      return o;
    }
  };
  struct pending_call {
    object_id object = 0;
    bool done = false;
    bool abandoned = false;  // dropped by its caller: the outcome is discarded on arrival
    // Its caller was told that the owner gave no sign of life in time: nothing waits for it,
    // not even this node's leaving (its error said the call may still run there).
    bool given_up = false;
    outcome out = {};
    std::optional<request> sent = {};  // a request to an owner: asked again if the copy moved
    bool offered = false;              // the owner offered its copy (automatic placement)
    bool replicas_offered = false;     // the owner asked for the object to be replicated
    // The object became replicated before the owner ran the call: dispatch it again.
    bool redo = false;
    // A request: when it was (last) sent and to whom; whether that node answered or said
    // that it keeps the call (a sign of life: the deadline no longer applies).
    absl::Time asked = absl::InfinitePast();
    comm::node_id asked_node = 0;
    bool acknowledged = false;
  };
  struct outgoing {
    comm::node_id to = 0;
    std::vector<std::byte> bytes;
  };

  // A new entry (its replica, or nothing where the single copy is elsewhere).
  [[nodiscard]] absl::StatusOr<std::unique_ptr<entry>> make_entry(
      object_id id, std::shared_ptr<const object_type::impl> type,
      const object_options& opts) const;
  void apply_create(const ordered_delivery& d, std::uint64_t call);
  // Migration (migration.cpp): the move at its point of the order; shipping the copy from
  // a node that holds it but no longer owns it; installing a copy that arrived; a caller
  // told that the copy moved; requests that waited for a move or an arrival.
  void apply_migrate(const ordered_delivery& d, object_id id, std::uint64_t call);
  void ship(entry& e);
  void install(entry& e, std::span<const std::byte> packet);
  void on_transfer(std::vector<std::byte> packet);
  // Before its creation is applied here (before_creation.cpp): keeping a request (refused
  // beyond kMaxParkedCalls of its caller) or a copy for an object created through the
  // order; serving and installing what was kept for `id` once it is; answering the requests
  // kept past the call timeout.
  void park_request(request r);
  void park_transfer(object_id id, std::vector<std::byte> packet);
  void unpark(object_id id);
  void expire_parked(bool& did_work);
  // Installs, in order, the early copies whose moves this node has now applied.
  void install_early(entry& e);
  void on_moved(std::span<const std::byte> bytes);
  // Whether this node's request `r` is of a read operation.
  [[nodiscard]] bool is_read(const request& r) const;
  void send_request(const request& r, comm::node_id to);
  // Tells the caller of `r` that this node keeps its call (it waits here).
  void send_accepted(const request& r);
  // A request unanswered past the deadline: DeadlineExceeded naming object, operation and
  // owner; the call is dropped (a late answer is discarded).
  [[nodiscard]] bool overdue(const pending_call& p) const;
  [[nodiscard]] absl::Status give_up(std::uint64_t call);
  void retry_deferred(entry& e);
  [[nodiscard]] absl::StatusOr<entry*> find(object_id id, const char* what) const;
  // An unguarded read of this node's replica, run at once and answered without a pending
  // call (the commonest call of all: no call number, no entry in pending_). None when the
  // call needs anything more (it is not such a read, it has guards, its arguments do not
  // decode, automatic placement counts it, ...): start() takes it then.
  [[nodiscard]] std::optional<absl::StatusOr<std::vector<std::byte>>> read_replica_now(
      object_id id, operation_id op_id, std::span<const std::byte> args);
  // The operation, or InvalidArgument naming the object.
  [[nodiscard]] absl::StatusOr<const operation*> find_op(const entry& e, operation_id op) const;
  // The operation, or null when the type has none of that id.
  [[nodiscard]] static const operation* operation_at(const entry& e, operation_id op);
  // Runs the first alternative whose guard holds; nothing when every guard is false.
  std::optional<outcome> attempt(entry& e, const operation& op, const decoded_arguments& args);
  // Runs or queues a call at this copy; `caller`/`call` say whom to resume.
  // `raw`: the argument bytes, kept with a waiting call of a single copy (migration).
  void execute(entry& e, const operation& op, decoded_arguments args, comm::node_id caller,
               std::uint64_t call, bool logged, std::span<const std::byte> raw);
  // After a write: retries the waiting calls (see the file comment).
  void walk_queue(entry& e);
  void resume(entry& e, comm::node_id caller, std::uint64_t call, outcome out);
  void complete(std::uint64_t call, outcome out);
  void apply_ordered(const ordered_delivery& d);
  // Applies what the objects order delivered and this table has not applied; whether any.
  bool apply_delivered();
  // A write's message in the objects order, framed as a batch of one; OutOfRange when too
  // large.
  [[nodiscard]] absl::StatusOr<std::vector<std::byte>> ordered_batch(
      operation_id op, object_id id, std::uint64_t call, std::span<const std::byte> body) const;
  void serve(request r);
  void on_reply(std::span<const std::byte> bytes);
  void send_reply(comm::node_id to, std::uint64_t call, const outcome& out, std::uint8_t offer = 0);
  // Sends what the outbox holds while credits allow; FIFO.
  [[nodiscard]] absl::Status flush_outbox(bool& did_work);
  // Puts a message (header then `body`) into the objects order. OutOfRange when too large.
  [[nodiscard]] absl::Status send_ordered(operation_id op, object_id id, std::uint64_t call,
                                          std::span<const std::byte> body);
  // Waits until `call` completes (dispatching it again when told to redo it); its outcome,
  // whether the owner offered its copy, and whether it asked for replicas.
  [[nodiscard]] absl::StatusOr<std::vector<std::byte>> wait(std::uint64_t call,
                                                            bool* offered = nullptr,
                                                            bool* replicas = nullptr);
  // Automatic placement (placement_policy.cpp): counts a call the owner runs for `caller`
  // and decides, after each window of calls, whether to offer the copy; whether the reply
  // to `caller` carries the offer; forgetting the counts once the copy moved.
  void note_use(entry& e, comm::node_id caller);
  [[nodiscard]] bool offer_for(entry& e, comm::node_id caller);
  void reset_uses(entry& e);
  void note_untaken_offer(object_id id);
  // Automatic switching (replication_switch.cpp): counting a call by kind and deciding;
  // asking the job to replicate `id` (through the order; returns once applied here); the
  // switches at their points of the order; a replica that arrived; a call to redo because
  // the object became replicated under it; this node's reads reported.
  void note_call(entry& e, comm::node_id caller, const operation& op);
  [[nodiscard]] std::uint8_t offer_for_call(entry& e, comm::node_id caller);
  [[nodiscard]] absl::Status replicate(object_id id);
  void apply_replicate(const ordered_delivery& d, object_id id, std::uint64_t call);
  void ship_replicas(entry& e);
  // Applies the ordered messages held while the object's replica was on its way.
  void apply_held(entry& e);
  // Whether redo(call) can dispatch the call without waiting (see redo()).
  [[nodiscard]] bool redo_ready(std::uint64_t call) const;
  // Dispatches every dropped call told to go out again, in order, waiting where one needs
  // to (see redo()); a dropped request not yet answered (nor kept by its owner), if any,
  // an overdue one first.
  [[nodiscard]] absl::Status dispatch_dropped();
  [[nodiscard]] std::optional<std::uint64_t> unanswered_dropped() const;
  void install_replica(entry& e, std::span<const std::byte> packet);
  void note_ordered(entry& e, const ordered_delivery& d, const operation& op);
  void apply_reads(const ordered_delivery& d, object_id id);
  void decide_replicated(entry& e);
  void unreplicate(entry& e, comm::node_id to);
  [[nodiscard]] bool hold_ordered(const ordered_delivery& d, object_id id, std::uint32_t op);
  [[nodiscard]] bool ordered_to_single_copy(const ordered_delivery& d, object_id id,
                                            std::uint32_t op, std::uint64_t call);
  [[nodiscard]] absl::Status redo(std::uint64_t call);
  // FailedPrecondition where a call of `op_id` on object `id` may not start: where progress
  // is forbidden (inside a guard, a body, a message handler or an inspection), naming it.
  [[nodiscard]] absl::Status refuse_nested_call(object_id id, operation_id op_id) const;
  // Waits, bounded by the call time-out, until `e`'s replica or copy on its way here has
  // come, or its placement moved on (the caller looks again). Errors: DeadlineExceeded
  // naming `what`, this node and the node it comes from; those of the wait.
  [[nodiscard]] absl::Status wait_for_state(entry& e, const std::string& what);
  [[nodiscard]] absl::Status report_reads(entry& e);
  [[nodiscard]] std::vector<std::byte> packed_copy(const entry& e, bool replica) const;

  event_loop& loop_;
  std::unique_ptr<object_order> order_;
  comm::node_id self_;
  std::uint32_t nodes_;
  std::size_t max_direct_;
  std::map<object_id, std::unique_ptr<entry>> objects_;
  object_id next_id_ = 0;                    // collective creations
  object_id next_ordered_id_ = kOrderedIds;  // creations through the order
  std::map<std::string, std::shared_ptr<const object_type::impl>> types_;
  std::uint64_t next_call_ = 1;
  std::map<std::uint64_t, pending_call> pending_;
  std::deque<request> requests_;
  // What came for an object created through the order before this node applied its
  // creation (the sender applied it first), kept here (before_creation.cpp): calls,
  // acknowledged and served once it is applied here, or answered with an error naming the
  // object after the call timeout (at most kMaxParkedCalls of one caller at once); and
  // copies shipped to this node (the creation's owner applied a migration or a replication
  // after it), installed then, however late: a copy comes only from a node that applied
  // the creation, which therefore reaches this node too unless the job fails.
  struct parked_request {
    request item;
    absl::Time since;  // its arrival, for its deadline
  };
  struct before_creation {
    std::vector<parked_request> requests;
    std::vector<std::vector<std::byte>> transfers;
  };
  std::map<object_id, before_creation> before_creation_;
  std::size_t parked_calls_ = 0;   // requests in before_creation_
  std::size_t parked_copies_ = 0;  // transfers in before_creation_
  absl::flat_hash_map<comm::node_id, std::size_t> parked_calls_by_caller_;
  absl::Time next_parked_expiry_ = absl::InfiniteFuture();
  std::deque<std::vector<std::byte>> transfers_;  // arrived copies, not yet installed
  std::deque<outgoing> outbox_;
  // Dropped calls told to redo (the object became replicated): dispatched again by the next
  // call of this node, so that a dropped write is still applied once.
  std::deque<std::uint64_t> redo_dropped_;  // dispatched again in the order they came
  absl::Duration call_timeout_ = absl::Seconds(60);
  // Inspections under way (nested ones count), and the outermost one's object.
  std::size_t inspections_ = 0;
  object_id inspected_ = 0;
};

}  // namespace iso::runtime
