#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <string>

#include "absl/base/attributes.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "base/check.hpp"
#include "iso/error.hpp"
#include "nicfw/fetch_add_service.hpp"
#include "nicfw/multicast_service.hpp"
#include "nicfw/remote_store_service.hpp"
#include "runtime/collective_digest.hpp"
#include "runtime/counters/counter_area.hpp"
#include "runtime/node_state.hpp"

namespace iso {

// A plain message, from delivery on: in place in the NIC's receive queue until the next
// receive after it was received (or queue pressure), then in a copy of its own.
struct message::holder {
  detail::node_state* owner = nullptr;  // once received, while in place; cleared if the node
                                        // goes first
  node_id source = 0;
  std::uint64_t record = 0;  // the queue record it is in, while in place
  bool in_place = true;
  std::span<const std::byte> view;
  std::vector<std::byte> copy;

  holder() = default;
  holder(const holder&) = delete;
  holder& operator=(const holder&) = delete;
  ~holder() {
    if (in_place && owner != nullptr) owner->drop_in_place(this);
  }
};

message::message() = default;
message::message(message&&) noexcept = default;
message& message::operator=(message&&) noexcept = default;
message::~message() = default;

std::span<const std::byte> message::bytes() const {
  return holder_ ? holder_->view : std::span<const std::byte>();
}

namespace detail {

namespace {

constexpr char kBarrierCall[] = "barrier()";

// The front of every window, which holds the SMM's copies (runtime/counters/counter_area.hpp).
std::vector<std::span<std::byte>> copies_part(const std::vector<std::span<std::byte>>& windows) {
  std::vector<std::span<std::byte>> out;
  out.reserve(windows.size());
  for (const std::span<std::byte> w : windows) out.push_back(runtime::split_window(w).copies);
  return out;
}

}  // namespace

void throw_status(const absl::Status& status) {
  ISO_CHECK(!status.ok()) << "throw_status with an OK status";
  throw iso::error(static_cast<error_code>(status.code()), std::string(status.message()));
}

node_state::node_state(std::unique_ptr<runtime::bootstrap> boot, std::unique_ptr<nicfw::engine> nic,
                       const iso::options& opts, const std::vector<std::span<std::byte>>& windows,
                       runtime::waiter_policy waiting)
    : boot_(std::move(boot)),
      nic_(std::move(nic)),
      options_(opts),
      agreement_(runtime::job_agreement_digest(nic_->topo(), opts)),
      loop_(*nic_, waiting, [this] { return boot_->job_status(); }),
      fibers_(loop_, boot_->rank()),
      plain_(loop_, {.credit_timeout = absl::FromChrono(opts.barrier_timeout)}),
      smm_(boot_->rank(), loop_,
           runtime::smm_options{.page_variables = opts.page_variables,
                                .trace = opts.trace,
                                .credit_timeout = absl::FromChrono(opts.barrier_timeout),
                                .paranoid = opts.paranoid,
                                .windows = copies_part(windows),
                                .direct_reads = opts.direct_reads,
                                .relaxed = opts.relaxed}),
      counters_(loop_),
      store_(loop_),
      forks_(loop_, fibers_, boot_->rank(), boot_->size(),
             {.answer_timeout = absl::FromChrono(opts.barrier_timeout)}) {
  // Counters held here live in this node's window when there is one, so that callers on
  // this host add to them with a CPU atomic; the NIC adds to the same words for the others.
  for (const std::span<std::byte> w : windows) {
    counter_areas_.push_back(runtime::split_window(w).counters);
  }
  auto counters = std::make_unique<nicfw::fetch_add_service>(nic_->context());
  if (id() < counter_areas_.size()) counters->place_counters(counter_areas_[id()]);
  nic_->add_service(std::move(counters), nicfw::fetch_add_service::kBinding);
  auto store = std::make_unique<nicfw::remote_store_service>(nic_->context());
  store_service_ = store.get();
  nic_->add_service(std::move(store), nicfw::remote_store_service::kBinding);
  // Answers of node::fetch_add and node::get land in read slots, so that their handles are
  // reads' handles.
  counters_.set_sink([this](std::uint32_t slot, std::uint64_t before) {
    smm_.read_result(id(), slot, 0, std::span(&before, 1));
  });
  store_.set_get_sink([this](std::uint32_t slot, comm::byte_span bytes) {
    std::vector<std::uint64_t> words(smm_.slot_size(slot));
    if (bytes.size() > words.size() * sizeof(std::uint64_t)) {
      fail(absl::InvalidArgumentError(absl::StrFormat(
          "get result of %u bytes for a get of at most %u", bytes.size(), words.size() * 8)));
      return;
    }
    if (!bytes.empty()) std::memcpy(words.data(), bytes.data(), bytes.size());
    smm_.read_result(id(), slot, 0, words);
  });
  auto multicast =
      std::make_unique<nicfw::multicast_service>(nic_->context(), nicfw::multicast_options{});
  multicast_ = multicast.get();
  nic_->add_service(std::move(multicast), nicfw::multicast_service::kBinding);
  // The option was checked with the others (config.cpp).
  const absl::StatusOr<nicfw::tree_shape> shape = nicfw::parse_tree_shape(opts.multicast_tree);
  sequenced_ = std::make_unique<runtime::sequencer_groups>(
      loop_, *multicast_, shape.ok() ? *shape : nicfw::tree_shape::binary,
      absl::FromChrono(opts.barrier_timeout));
  isotach_ordered_ = std::make_unique<runtime::isotach_groups>(smm_, loop_);
  plain_.set_receiver(
      [this](node_id source, std::span<const std::byte> bytes, std::uint64_t record) {
        auto h = std::make_unique<message::holder>();
        h->source = source;
        h->record = record;
        h->view = bytes;
        inbox_.push_back(std::move(h));
      });
  // Received messages hold their place in the NIC's queue, and nothing behind them can
  // reuse it: when the queue runs full, they move out.
  plain_.set_pressure_handler([this] {
    move_out_of_place();
    copy_inbox_out_of_place();
  });
  // Fences of other nodes' quiet(): every isochron of theirs before the fence has executed
  // here (pulses execute in order, and one node's isochrons in issue order), so answering
  // now tells them so.
  smm_.set_handler(kQuietHandler, [this](node_id source, std::span<const std::byte> payload) {
    std::uint32_t slot = 0;
    if (payload.size() != sizeof(slot)) return;  // not a fence of ours: nobody waits for it
    std::memcpy(&slot, payload.data(), sizeof(slot));
    const std::uint64_t executed = 1;
    smm_.read_result(source, slot, 0, std::span(&executed, 1));
  });
  // A forked process's writes have executed everywhere before its forker learns it ended.
  forks_.set_settle([this] { return quiet(); });
  nic_->start();
}

node_state::~node_state() {
  // Messages the application still holds outlive the queue they are in: they must not
  // call back (reading their bytes now is the application's error, as documented).
  for (message::holder* h : in_place_) h->owner = nullptr;
  if (objects_link_) objects_link_->owner = nullptr;  // object handles may outlive the node
}

std::unique_ptr<node> node_state::make_node(std::unique_ptr<node_state> state) {
  return std::unique_ptr<node>(new node(std::move(state)));
}

std::size_t node_state::max_message_size() const { return smm_.max_message_size(); }

absl::Status node_state::barrier() {
  return ordered_barrier(runtime::collective_digest::kind::barrier, kBarrierCall);
}

absl::Status node_state::end_barrier() {
  // A digest of its own: a barrier() one node makes beyond the others' must not pass with
  // their end of the job.
  return ordered_barrier(runtime::collective_digest::kind::end_of_job,
                         "the end-of-job barrier (the node's body returned, or iso_deinit)");
}

absl::Status node_state::ordered_barrier(runtime::collective_digest::kind kind, const char* call) {
  absl::StatusOr<collective_turn> turn = begin_collective(call);
  if (!turn.ok()) return turn.status();
  // Our own isochrons first: then our last stamp is known and final.
  if (absl::Status s = smm_.drain_issued(); !s.ok()) return s;
  boot_->publish_mark(smm_.last_stamp());
  const std::uint64_t digest = runtime::collective_digest(kind).add(agreement_).value();
  if (absl::Status s = rendezvous(*turn, digest, call); !s.ok()) return s;
  // Everything issued before the barrier, by anyone, executes here before we leave.
  return smm_.sync_to(boot_->max_mark());
}

absl::Status node_state::quiet() {
  if (absl::Status s = usable_for_collective("quiet()"); !s.ok()) return s;
  // One isochron with a fence to every other node; each answers when it executes it, by
  // then having executed everything this node issued before.
  std::vector<std::pair<node_id, runtime::read_slots::ticket>> fences;
  auto answer_here = [&](runtime::read_slots::ticket t) {
    const std::uint64_t none = 0;
    smm_.read_result(id(), t.slot, 0, std::span(&none, 1));  // nobody else will
    smm_.close(t);
  };
  if (count() > 1) {
    if (absl::Status s = open_isochron(); !s.ok()) return s;
    absl::Status added;
    for (node_id n = 0; n < count() && added.ok(); ++n) {
      if (n == id()) continue;
      const runtime::read_slots::ticket t = smm_.open_slot(1);
      added = smm_.message(n, kQuietHandler, std::as_bytes(std::span(&t.slot, 1)));
      if (added.ok()) {
        fences.emplace_back(n, t);
      } else {
        answer_here(t);
      }
    }
    absl::Status ended = close_isochron();
    if (!added.ok() || !ended.ok()) {
      for (const auto& [n, t] : fences) answer_here(t);
      return added.ok() ? ended : added;
    }
  }
  absl::StatusOr<bool> answered =
      loop_.wait_until(absl::Now() + absl::FromChrono(options_.barrier_timeout), [&] {
        return std::all_of(fences.begin(), fences.end(),
                           [&](const auto& fence) { return smm_.ready(fence.second); });
      });
  std::string silent;
  for (const auto& [n, t] : fences) {
    if (!smm_.ready(t)) absl::StrAppendFormat(&silent, " %u", n);
    smm_.close(t);  // an answer still on its way frees its slot when it comes
  }
  if (!answered.ok()) return answered.status();
  if (!*answered) {
    return absl::DeadlineExceededError(absl::StrFormat(
        "quiet() on node %u: node(s)%s did not execute its isochrons within %s (they are not "
        "making progress: no call into the runtime, or poll(), there)",
        id(), silent, absl::FormatDuration(absl::FromChrono(options_.barrier_timeout))));
  }
  // And here: its own parts of those isochrons.
  return smm_.drain_issued();
}

absl::Status node_state::open_isochron() {
  if (absl::Status s = await_other_fibers_isochron(); !s.ok()) return s;
  // The others passed (or will pass) that barrier with this node's mark as it arrived: an
  // isochron issued now would not be ordered by it.
  if (unfinished_rendezvous_.has_value()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "isochron on node %u while its %s that ran out of time is unfinished: call it again "
        "first (an isochron issued now would not be ordered by it)",
        id(), unfinished_rendezvous_->call));
  }
  if (absl::Status s = smm_.begin(); !s.ok()) return s;
  isochron_owner_ = &fibers_.current();
  begin_isochron();
  return absl::OkStatus();
}

absl::Status node_state::close_isochron() {
  absl::Status s = smm_.end();
  isochron_owner_ = nullptr;
  return s;
}

absl::Status node_state::await_other_fibers_isochron() {
  if (isochron_owner_ == nullptr || own_isochron_open()) return absl::OkStatus();
  return loop_.wait_for([this] { return isochron_owner_ == nullptr; });
}

absl::Status node_state::refuse_where_waits_are_forbidden(std::string_view what) const {
  const char* inside = loop_.forbidden_inside();
  if (inside == nullptr) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrFormat(
      "%s inside %s on node %u: it may wait for other nodes, and this node may not wait there",
      what, inside, id()));
}

absl::Status node_state::usable_for_collective(const char* what) {
  if (absl::Status s = usable_outside_isochron(what); !s.ok()) return s;
  // Before the call changes anything here: the other nodes would not make it.
  return refuse_where_waits_are_forbidden(what);
}

absl::Status node_state::usable_outside_isochron(const char* what) {
  if (absl::Status s = health(); !s.ok()) return s;
  // Such calls may wait (running other fibers and rounds) or change an object.
  if (objects_ != nullptr) {
    if (absl::Status s = objects_->refuse_inside_inspection(what); !s.ok()) return s;
  }
  if (absl::Status s = await_other_fibers_isochron(); !s.ok()) return s;
  if (smm_.in_isochron()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s inside an open isochron on node %u; end the isochron first", what, id()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::uint64_t> node_state::allocate(std::uint64_t count, std::uint8_t width,
                                                   const runtime::copyset_rule& rule) {
  // Before the pages are taken here: the other nodes would not take them.
  absl::StatusOr<collective_turn> turn = begin_collective("allocate()");
  if (!turn.ok()) return turn.status();
  absl::StatusOr<std::uint64_t> first = smm_.allocate(count, width, rule);
  if (!first.ok()) return first;
  // Every node must have made this very allocation: the same size, and the same copyset
  // for every page (a placement or a map that differs between nodes would give them
  // different views of who holds what).
  runtime::collective_digest digest(runtime::collective_digest::kind::allocate);
  digest.add(agreement_).add(count).add(width);
  const std::vector<runtime::page_info>& pages = smm_.pages().pages();
  for (std::uint64_t p = smm_.pages().page_of(*first); p < pages.size(); ++p) {
    digest.add(pages[p].copyset);
  }
  const std::string call =
      absl::StrFormat("allocate(%u variables of %u bytes) at address %u", count, width, *first);
  if (absl::Status s = rendezvous(*turn, digest.value(), call); !s.ok()) return s;
  return first;
}

absl::StatusOr<node_state::collective_turn> node_state::begin_collective(const char* what) {
  // Refused before anything changes here: an arrival cannot be taken back, and the others'
  // barrier would pass with it.
  if (absl::Status s = usable_for_collective(what); !s.ok()) return s;
  if (in_rendezvous_) {
    if (absl::Status s = loop_.wait_for([this] { return !in_rendezvous_; }); !s.ok()) return s;
  }
  if (unfinished_rendezvous_.has_value() &&
      (unfinished_rendezvous_->call != kBarrierCall || std::string_view(what) != kBarrierCall)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s on node %u: this node's %s ran out of time, and its arrival there stands (the "
        "others meet it there)%s",
        what, id(), unfinished_rendezvous_->call,
        unfinished_rendezvous_->call == kBarrierCall
            ? "; only barrier() may follow, to wait for them again"
            : "; this node can make no other collective call"));
  }
  return collective_turn(in_rendezvous_);
}

absl::Status node_state::rendezvous(const collective_turn& turn, std::uint64_t digest,
                                    std::string_view call) {
  (void)turn;
  ISO_DCHECK(in_rendezvous_) << "rendezvous() without the collective turn";
  std::optional<std::uint64_t> resumed;
  if (unfinished_rendezvous_.has_value()) {
    // A barrier() called again (begin_collective let nothing else through): its arrival
    // stands, and it waits for the same barrier.
    resumed = unfinished_rendezvous_->ticket;
    unfinished_rendezvous_.reset();
  }
  // The barrier runs beside the NIC, not through it: what this host did to its windows
  // before it must happen before what the NIC does to them for others afterwards, and the
  // puts the NIC applied before must happen before this host's reads afterwards
  // (iso/window.hpp).
  store_service_->synchronize_with_host();
  const std::uint64_t ticket = resumed.has_value() ? *resumed : boot_->barrier_arrive(digest);
  const absl::Time deadline = absl::Now() + absl::FromChrono(options_.barrier_timeout);
  absl::Status outcome;
  const runtime::event_loop::unannounced_wait unannounced(loop_);
  absl::Status waited = loop_.wait_for([&] {
    absl::StatusOr<bool> passed = boot_->barrier_passed(ticket);
    if (!passed.ok()) {
      outcome = passed.status();
      return true;
    }
    if (*passed) return true;
    if (absl::Now() >= deadline) {
      std::string missing;
      for (node_id n = 0; n < count(); ++n) {
        if (!boot_->barrier_arrived(n, ticket)) absl::StrAppendFormat(&missing, " %u", n);
      }
      outcome = absl::DeadlineExceededError(absl::StrFormat(
          "%s on node %u: node(s)%s did not arrive within %s (this node's arrival stands: %s)",
          call, id(), missing, absl::FormatDuration(absl::FromChrono(options_.barrier_timeout)),
          call == kBarrierCall ? "calling barrier() again waits for them again"
                               : "it can make no other collective call"));
      unfinished_rendezvous_ = unfinished_rendezvous{ticket, digest, std::string(call)};
      return true;
    }
    return false;
  });
  if (!waited.ok()) return waited;
  if (!outcome.ok()) return outcome;
  store_service_->synchronize_with_host();
  std::string differing;
  for (node_id n = 0; n < count(); ++n) {
    if (boot_->barrier_digest(n, ticket) != digest) absl::StrAppendFormat(&differing, " %u", n);
  }
  if (differing.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrFormat(
      "collective calls disagree: node %u made %s, but node(s)%s made another collective call "
      "there, or this one with other arguments or settings (allocations, placements, the "
      "shmem map, the topology and the memory settings must be the same on every node)",
      id(), call, differing));
}

absl::Status node_state::send(node_id to, std::span<const std::byte> bytes) {
  return plain_.send(to, bytes);
}

absl::StatusOr<message> node_state::receive() {
  move_out_of_place();
  if (absl::Status s = loop_.wait_for([this] { return !inbox_.empty(); }); !s.ok()) return s;
  return pop_inbox();
}

absl::StatusOr<std::optional<message>> node_state::try_receive() {
  move_out_of_place();
  bool did = false;
  if (absl::Status s = loop_.progress(did); !s.ok()) return s;
  if (inbox_.empty()) return std::optional<message>();
  return std::optional<message>(pop_inbox());
}

message node_state::pop_inbox() {
  message out;
  out.holder_ = std::move(inbox_.front());
  inbox_.pop_front();
  message::holder& h = *out.holder_;
  out.source_ = h.source;
  // A message's credits come back once it is received and out of the queue.
  if (h.in_place) {
    h.owner = this;
    in_place_.push_back(&h);
  } else {
    plain_.free(h.source, h.view.size());  // copied out under pressure
  }
  return out;
}

void node_state::copy_out(message::holder& h) {
  h.copy.assign(h.view.begin(), h.view.end());
  h.view = h.copy;
  h.in_place = false;
  plain_.release(h.record);
}

void node_state::drop_in_place(message::holder* h) {
  h->in_place = false;
  plain_.release(h->record);
  plain_.free(h->source, h->view.size());
  in_place_.erase(std::find(in_place_.begin(), in_place_.end(), h));
}

void node_state::copy_inbox_out_of_place() {
  for (const std::unique_ptr<message::holder>& h : inbox_) {
    if (h->in_place) copy_out(*h);  // its credits stay used until it is received
  }
}

void node_state::move_out_of_place() {
  // Messages the application still holds from earlier receives get copies of their own,
  // so that holding one never keeps the NIC's queue (and the sender's credits) from being
  // reused; the usual receive-use-drop pattern copies nothing.
  for (message::holder* h : in_place_) {
    copy_out(*h);
    plain_.free(h->source, h->view.size());
  }
  in_place_.clear();
}

absl::StatusOr<notice> node_state::iso_receive() {
  runtime::receive_queue& q = smm_.notices();
  // Taking from a queue that holds notices needs no progress, but senders wait for the
  // credits that taking returns.
  if (!q.empty()) {
    if (absl::Status s = loop_.progress_now_and_then(q.front_payload_size()); !s.ok()) return s;
  }
  if (absl::Status s = loop_.wait_for([&] { return !q.empty(); }); !s.ok()) return s;
  notice n = q.pop();
  smm_.free_notice(n);
  return n;
}

absl::StatusOr<std::optional<notice>> node_state::try_iso_receive() {
  bool did = false;
  if (absl::Status s = loop_.progress(did); !s.ok()) return s;
  runtime::receive_queue& q = smm_.notices();
  if (q.empty()) return std::optional<notice>();
  notice n = q.pop();
  smm_.free_notice(n);
  return std::optional<notice>(std::move(n));
}

absl::Status node_state::one_op_isochron(absl::FunctionRef<absl::Status()> op) {
  if (absl::Status s = open_isochron(); !s.ok()) return s;
  absl::Status added = op();
  // The isochron is issued even when the operation was refused (then it is empty and
  // issuing it does nothing), so that no isochron is left open.
  absl::Status ended = close_isochron();
  return added.ok() ? ended : added;
}

namespace {

// The error paths out of line: the ready value is the hot path (a local read isochron).
[[noreturn]] ABSL_ATTRIBUTE_NOINLINE void fail_without_node(node_link* link, const char* what) {
  if (link == nullptr) {
    throw iso::error(error_code::failed_precondition,
                     absl::StrFormat("%s on a value that holds no read (default-constructed or "
                                     "moved from); assign it the result of isochron::read first",
                                     what));
  }
  throw iso::error(
      error_code::failed_precondition,
      absl::StrFormat("%s on a value whose node no longer exists (the value outlived it)", what));
}

// The node of a read handle's read; throws iso::error when there is none.
inline node_state& state_of_read(node_link* link, const char* what) {
  if (link == nullptr || link->owner == nullptr) fail_without_node(link, what);
  return *link->owner;
}

ABSL_ATTRIBUTE_NOINLINE std::span<const std::uint64_t> wait_for_value(node_state& state,
                                                                      read_ticket t) {
  runtime::shared_memory_manager& smm = state.smm();
  const runtime::read_slots::ticket ticket{t.slot, t.generation};
  // Its isochron is not issued yet, so its value cannot arrive: waiting would never end.
  if (smm.in_isochron() && t.isochron == state.isochron_serial()) {
    throw iso::error(
        error_code::failed_precondition,
        absl::StrFormat("get() on node %u for a read of the isochron still open there: its "
                        "value cannot arrive before the isochron ends; call end() first",
                        state.id()));
  }
  // A read that waits for this node's own assign, where no other fiber could make it (one
  // that starts meanwhile, a fork, ends the check: it might).
  std::optional<std::uint64_t> stuck;
  const bool behind_own_sched = smm.issued_behind_own_sched(ticket);
  throw_if_error(state.loop().wait_for([&] {
    if (smm.ready(ticket)) return true;
    if (!behind_own_sched || state.loop().runs_fibers()) return false;
    stuck = smm.waits_on_own_sched(ticket);
    return stuck.has_value();
  }));
  if (stuck.has_value()) {
    throw iso::error(
        error_code::failed_precondition,
        absl::StrFormat("get() on node %u for a read of address %u, which waits for the assign "
                        "of this node's own sched: only that assign can give the value, so the "
                        "wait would never end; assign it first",
                        state.id(), *stuck));
  }
  return smm.values(ticket);
}

}  // namespace

bool read_ready(node_link* link, read_ticket t) {
  node_state& state = state_of_read(link, "ready()");
  runtime::shared_memory_manager& smm = state.smm();
  const runtime::read_slots::ticket ticket{t.slot, t.generation};
  if (smm.ready(ticket)) return true;
  bool did = false;
  throw_if_error(state.loop().progress(did));
  return smm.ready(ticket);
}

std::span<const std::uint64_t> read_wait(node_link* link, read_ticket t) {
  node_state& state = state_of_read(link, "get()");
  runtime::shared_memory_manager& smm = state.smm();
  const runtime::read_slots::ticket ticket{t.slot, t.generation};
  if (smm.ready(ticket)) return smm.values(ticket);
  return wait_for_value(state, t);
}

void read_release(node_link* link, read_ticket t) noexcept {
  if (link->owner != nullptr) link->owner->smm().close({t.slot, t.generation});
  if (--link->handles == 0 && link->owner == nullptr) delete link;
}

}  // namespace detail

node::node(std::unique_ptr<detail::node_state> state) : state_(std::move(state)) {
  state_->set_link(new detail::node_link{.owner = state_.get(), .handles = 0});
  state_->forks().set_node(this);
}

node::~node() {
  // Read handles may outlive the node: they keep the link, and the last of them frees it.
  detail::node_link* link = state_->link();
  link->owner = nullptr;
  if (link->handles == 0) delete link;
}

node_id node::id() const { return state_->id(); }
std::uint32_t node::count() const { return state_->count(); }
const options& node::options() const { return state_->options(); }
std::size_t node::max_message_size() const { return state_->max_message_size(); }

void node::barrier() { detail::throw_if_error(state_->barrier()); }

void node::send(node_id to, std::span<const std::byte> bytes) {
  detail::throw_if_error(state_->send(to, bytes));
}

message node::receive() { return detail::value_or_throw(state_->receive()); }

std::optional<message> node::try_receive() { return detail::value_or_throw(state_->try_receive()); }

notice node::iso_receive() { return detail::value_or_throw(state_->iso_receive()); }

std::optional<notice> node::try_iso_receive() {
  return detail::value_or_throw(state_->try_iso_receive());
}

void node::signal(channel_id channel) {
  runtime::shared_memory_manager& smm = state_->smm();
  detail::throw_if_error(state_->one_op_isochron([&] { return smm.signal(channel); }));
}

void node::start_barrier(channel_id channel, barrier_mode mode) {
  runtime::shared_memory_manager& smm = state_->smm();
  detail::throw_if_error(
      state_->one_op_isochron([&] { return smm.barrier_arrival(channel, mode); }));
}

bool node::barrier_complete(channel_id channel) const {
  return channel < kChannels && state_->smm().notices().barrier_complete(channel);
}

void node::poll() {
  bool did = false;  // a poll counts towards the job's look whether it did something or not
  detail::throw_if_error(state_->loop().progress(did));
  // A dropped object call this round told to go out again goes out now, not only at this
  // node's next object call, which may never come.
  detail::throw_if_error(state_->settle_dropped_objects(/*leaving=*/false));
  detail::throw_if_error(state_->loop().note_poll());
}

void node::quiet() { detail::throw_if_error(state_->quiet()); }

void node::quiesce() {
  detail::throw_if_error(state_->usable_outside_isochron("quiesce()"));
  detail::throw_if_error(state_->smm().drain());
}

const std::vector<trace_event>& node::trace() const { return state_->smm().trace(); }

void node::set_relaxed(bool on) {
  detail::throw_if_error(state_->usable_outside_isochron("set_relaxed()"));
  if (on && !state_->options().relaxed) {
    throw error(error_code::failed_precondition,
                "set_relaxed(true) in a job started without options::relaxed (ISO_RELAXED=1): "
                "relaxed mode is not sequentially consistent and only a job that asks for it "
                "may use it");
  }
  state_->smm().set_relaxed(on);
}

bool node::relaxed() const { return state_->smm().relaxed(); }

void node::set_handler(handler_id id,
                       std::function<void(node_id source, std::span<const std::byte>)> fn) {
  if (detail::reserved_handler(id)) {
    throw iso::error(error_code::invalid_argument,
                     absl::StrFormat("handler id %u is reserved for the runtime", id));
  }
  state_->smm().set_handler(id, std::move(fn));
}

namespace {

// Isotach memory holds at most this many variables, all allocations together: page and
// copy indices are 32-bit, and a node that holds everything keeps 16 bytes per variable.
constexpr std::uint64_t kMaxVariables = std::uint64_t{1} << 32;

// Refuses an allocation that cannot fit before anything is built for it. Every node decides
// alike (the same calls, the same host), so a refusal leaves the job consistent.
absl::Status check_allocation(std::uint64_t count, std::size_t width, std::uint64_t allocated) {
  if (width != 4 && width != 8) {
    return absl::InvalidArgumentError(absl::StrFormat("variable width %u is not 4 or 8", width));
  }
  if (count > kMaxVariables - std::min(allocated, kMaxVariables)) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "allocating %u variables: isotach memory holds at most %u variables in all, and %u are "
        "allocated already",
        count, kMaxVariables, allocated));
  }
  // A node holding a copy keeps 16 bytes per variable; more than the host's memory would
  // only end in std::bad_alloc (or the OOM killer) after building everything else.
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page_size > 0) {
    const std::uint64_t memory = static_cast<std::uint64_t>(pages) * page_size;
    const std::uint64_t copy_bytes = count * sizeof(runtime::shared_variable);
    if (copy_bytes > memory) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "allocating %u variables: a copy of them takes %u bytes, more than this host's %u "
          "bytes of memory",
          count, copy_bytes, memory));
    }
  }
  return absl::OkStatus();
}

}  // namespace

address node::allocate_raw(std::size_t count, std::size_t width, const placement& where) {
  const runtime::page_table& pages = state_->smm().pages();
  detail::throw_if_error(
      check_allocation(count, width, pages.pages().size() * std::uint64_t{pages.page_variables()}));
  const std::uint32_t nodes = this->count();
  try {
    return detail::value_or_throw(
        state_->allocate(count, static_cast<std::uint8_t>(width),
                         [&](std::uint64_t page) { return where.copyset(page, nodes); }));
  } catch (const std::bad_alloc&) {
    // The allocation may be half built here, and the other nodes may have made it: this
    // node cannot go on.
    const absl::Status failed = absl::ResourceExhaustedError(absl::StrFormat(
        "allocating %u variables of %u bytes on node %u: out of memory", count, width, id()));
    state_->fail(failed);
    detail::throw_status(failed);
  }
}

}  // namespace iso
