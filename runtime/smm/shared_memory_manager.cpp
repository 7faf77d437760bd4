#include "runtime/smm/shared_memory_manager.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <exception>
#include <thread>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_format.h"
#include "base/check.hpp"
#include "runtime/progress/credit_wait.hpp"
#include "runtime/progress/direct_tags.hpp"

namespace iso::runtime {
namespace {

struct read_reply_header {
  direct_tag tag = direct_tag::read_reply;
  std::uint8_t reserved[3] = {};
  std::uint32_t slot;
  std::uint32_t first;
  std::uint32_t count;
};
static_assert(sizeof(read_reply_header) == 16);

// Paranoid mode: "your isochron `sequence` executed here at `pulse`".
struct echo_packet {
  direct_tag tag = direct_tag::echo;
  std::uint8_t reserved[3] = {};
  std::uint32_t sequence;
  std::uint64_t pulse;
};
static_assert(sizeof(echo_packet) == 16);

}  // namespace

shared_memory_manager::shared_memory_manager(node_id self, event_loop& loop,
                                             const smm_options& options)
    : self_(self),
      loop_(loop),
      nic_(loop.nic()),
      options_(options),
      pages_(self, loop.nic().topo(), options.page_variables),
      window_(self < options.windows.size() ? options.windows[self] : std::span<std::byte>(),
              options.page_variables),
      memory_(pages_, window_),
      builder_(self, nic_.topo().nodes(), pages_,
               {.record_bytes = nic_.channel().max_record(), .message_bytes = max_message_size()}),
      queue_(nic_.topo().nodes()),
      echoes_(self),
      window_reads_(self, pages_, options.windows, options.page_variables, nic_.topo().nodes()) {
  constexpr nicfw::delivery_kind kKinds[] = {
      nicfw::delivery_kind::iso_data, nicfw::delivery_kind::closing_data,
      nicfw::delivery_kind::marker, nicfw::delivery_kind::eop};
  loop.add_unit(*this, kKinds);
  loop.add_direct_unit(*this, static_cast<std::uint8_t>(direct_tag::read_reply));
  loop.add_direct_unit(*this, static_cast<std::uint8_t>(direct_tag::echo));
  const nicfw::engine& nic = nic_;
  for (node_id n = 0; n < nic.topo().nodes(); ++n) {
    if (n != self) nearest_distance_ = std::min(nearest_distance_, nic.topo().distance(self, n));
  }
  nic_.ring_host_on_close_for(window_.wanted_word());
}

absl::StatusOr<std::uint64_t> shared_memory_manager::allocate(std::uint64_t count,
                                                              std::uint8_t width,
                                                              const copyset_rule& rule) {
  if (builder_.open()) return absl::FailedPreconditionError("allocate inside an isochron");
  absl::StatusOr<std::uint64_t> first = pages_.allocate(count, width, rule);
  if (first.ok()) memory_.grow();
  return first;
}

absl::Status shared_memory_manager::check_open(const char* what) const {
  if (loop_.progress_forbidden()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s inside %s, where no operation may be issued", what, loop_.forbidden_inside()));
  }
  if (!builder_.open()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s outside an isochron; start one first", what));
  }
  return absl::OkStatus();
}

absl::Status shared_memory_manager::open_for(const char* what) {
  if (absl::Status s = check_open(what); !s.ok()) return s;
  return add_lone_read();
}

absl::Status shared_memory_manager::add_lone_read() {
  if (!lone_read_.active) return absl::OkStatus();
  lone_read_.active = false;
  return builder_.add(op_code::read, lone_read_.width, lone_read_.address, lone_read_.count, {},
                      lone_read_.slot);
}

absl::Status shared_memory_manager::begin() {
  if (loop_.progress_forbidden()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("isochron started inside %s", loop_.forbidden_inside()));
  }
  if (builder_.open()) {
    return absl::FailedPreconditionError("an isochron is already open on this node");
  }
  builder_.begin(next_rank_++);
  lone_read_.active = false;
  return absl::OkStatus();
}

absl::Status shared_memory_manager::read(std::uint8_t width, std::uint64_t address,
                                         std::uint32_t count, read_slots::ticket& ticket) {
  if (absl::Status s = check_open("read"); !s.ok()) return s;
  const read_slots::ticket t = slots_.open(count);
  // The isochron's first operation, a read within one page, is only noted: if it stays
  // alone, end() may serve it without building a stream (latency-bound reads).
  if (builder_.empty() && !lone_read_.active) {
    const page_info* page = pages_.lookup(address);
    if (page != nullptr && page->width == width && count != 0 &&
        pages_.page_of(address) == pages_.page_of(address + count - 1)) {
      lone_read_ = {true, width, address, count, t.slot, page};
      note_read_behind_sched(t, address, count);
      ticket = t;
      return absl::OkStatus();
    }
  }
  if (absl::Status s = add_lone_read(); !s.ok()) return s;
  if (absl::Status s = builder_.add(op_code::read, width, address, count, {}, t.slot); !s.ok()) {
    abandon_slot(t, count);
    return s;
  }
  note_read_behind_sched(t, address, count);
  ticket = t;
  return absl::OkStatus();
}

void shared_memory_manager::note_read_behind_sched(read_slots::ticket t, std::uint64_t address,
                                                   std::uint32_t count) {
  if (outstanding_scheds_.empty()) return;  // the usual case, on every read
  // Whichever is fewer: the read's variables, or the scheds.
  if (count <= outstanding_scheds_.size()) {
    for (std::uint64_t a = address; a - address < count; ++a) {
      if (auto it = outstanding_scheds_.find(a); it != outstanding_scheds_.end()) {
        reads_behind_scheds_[t.slot] = {t.generation, a, it->second};
        return;
      }
    }
    return;
  }
  for (const auto& [scheduled, sched] : outstanding_scheds_) {
    if (scheduled >= address && scheduled - address < count) {
      reads_behind_scheds_[t.slot] = {t.generation, scheduled, sched};
      return;
    }
  }
}

absl::Status shared_memory_manager::check_no_read_awaits_own_assign(std::string_view when) const {
  if (outstanding_scheds_.empty()) return absl::OkStatus();
  // Every assign this node issued has executed here: a read still waiting for its version
  // waits for a sched it never assigned.
  std::vector<std::pair<std::uint64_t, node_id>> stuck = memory_.waiting_for(self_ + 1);
  std::erase_if(stuck, [&](const auto& read) { return !outstanding_scheds_.contains(read.first); });
  if (stuck.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrFormat(
      "node %u: %s while a read (node %u's) of address %u waits for the assign of this node's "
      "sched, which can never come now%s; assign every sched that is read",
      self_, when, stuck.front().second, stuck.front().first,
      stuck.size() > 1 ? absl::StrFormat(" (and %u more address(es))", stuck.size() - 1) : ""));
}

const shared_memory_manager::behind_sched* shared_memory_manager::unassigned_sched_before(
    read_slots::ticket t) const {
  if (reads_behind_scheds_.empty()) return nullptr;
  auto read = reads_behind_scheds_.find(t.slot);
  if (read == reads_behind_scheds_.end() || read->second.generation != t.generation) {
    return nullptr;
  }
  auto sched = outstanding_scheds_.find(read->second.address);
  if (sched == outstanding_scheds_.end() || sched->second != read->second.sched) return nullptr;
  return &read->second;
}

std::optional<std::uint64_t> shared_memory_manager::waits_on_own_sched(read_slots::ticket t) const {
  const behind_sched* read = unassigned_sched_before(t);
  if (read == nullptr) return std::nullopt;
  // Waiting for version self_ + 1 behind that sched is waiting for its assign: the latest
  // sched of this node's before the read (another's write or sched in between would have
  // left it no reason to wait for this node).
  if (!memory_.read_waits(read->address, self_ + 1, self_, t.slot)) return std::nullopt;
  return read->address;
}

void shared_memory_manager::abandon_slot(read_slots::ticket t, std::uint32_t count) {
  slots_.close(t);
  // The slot never gets values; count it as answered so that drain() does not wait.
  const std::vector<std::uint64_t> none(count);
  (void)slots_.fill(t.slot, 0, none);
}

absl::Status shared_memory_manager::read_modify_write(op_code code, std::uint8_t width,
                                                      std::uint64_t address,
                                                      std::span<const std::uint64_t> operands,
                                                      read_slots::ticket& ticket) {
  ISO_DCHECK(is_rmw(code) && operands.size() == rmw_operands(code)) << "bad read-modify-write";
  if (absl::Status s = open_for("read-modify-write"); !s.ok()) return s;
  const read_slots::ticket t = slots_.open(1);
  if (absl::Status s = builder_.add(code, width, address, 1, operands, t.slot); !s.ok()) {
    abandon_slot(t, 1);
    return s;
  }
  note_read_behind_sched(t, address, 1);
  ticket = t;
  return absl::OkStatus();
}

absl::Status shared_memory_manager::write(std::uint8_t width, std::uint64_t address,
                                          std::span<const std::uint64_t> values) {
  if (absl::Status s = open_for("write"); !s.ok()) return s;
  return builder_.add(op_code::write, width, address, static_cast<std::uint32_t>(values.size()),
                      values, 0);
}

absl::Status shared_memory_manager::sched(std::uint8_t width, std::uint64_t address) {
  if (absl::Status s = open_for("sched"); !s.ok()) return s;
  // A bad address or width first, as for any other operation, before what this node owes.
  if (absl::Status s = pages_.find(address, width).status(); !s.ok()) return s;
  if (outstanding_scheds_.contains(address)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "node %u already has an outstanding sched on address %u; assign it first", self_, address));
  }
  if (absl::Status s = builder_.add(op_code::sched, width, address, 1, {}, 0); !s.ok()) return s;
  outstanding_scheds_.emplace(address, ++scheds_made_);
  return absl::OkStatus();
}

absl::Status shared_memory_manager::assign(std::uint8_t width, std::uint64_t address,
                                           std::uint64_t value) {
  if (absl::Status s = open_for("assign"); !s.ok()) return s;
  if (absl::Status s = pages_.find(address, width).status(); !s.ok()) return s;
  if (!outstanding_scheds_.contains(address)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "assign to address %u without a sched: node %u has no outstanding sched there", address,
        self_));
  }
  const std::uint64_t one = value;
  if (absl::Status s = builder_.add(op_code::assign, width, address, 1, std::span(&one, 1), 0);
      !s.ok()) {
    return s;
  }
  outstanding_scheds_.erase(address);
  return absl::OkStatus();
}

absl::Status shared_memory_manager::message(node_id to, std::uint32_t handler,
                                            std::span<const std::byte> payload) {
  if (absl::Status s = open_for("message"); !s.ok()) return s;
  if (!handlers_.contains(handler)) {
    return absl::NotFoundError(absl::StrFormat(
        "no handler is registered under id %u (register it on every node first)", handler));
  }
  return builder_.add_message(to, op_code::message, handler, payload);
}

absl::Status shared_memory_manager::message(std::span<const node_id> to, std::uint32_t handler,
                                            std::span<const std::byte> payload) {
  if (absl::Status s = open_for("message"); !s.ok()) return s;
  if (!handlers_.contains(handler)) {
    return absl::NotFoundError(absl::StrFormat(
        "no handler is registered under id %u (register it on every node first)", handler));
  }
  return builder_.add_message(to, op_code::message, handler, payload);
}

absl::Status shared_memory_manager::queued_message(node_id to, std::span<const std::byte> payload) {
  if (absl::Status s = open_for("message"); !s.ok()) return s;
  return builder_.add_message(to, op_code::queued, 0, payload);
}

absl::Status shared_memory_manager::signal(channel_id channel) {
  if (absl::Status s = open_for("signal"); !s.ok()) return s;
  if (channel >= kChannels) {
    return absl::InvalidArgumentError(
        absl::StrFormat("signal on channel %u: channels are 0..%u", channel, kChannels - 1));
  }
  return builder_.add_group(op_code::signal, channel, 0, 0);
}

absl::Status shared_memory_manager::barrier_arrival(channel_id channel, barrier_mode mode) {
  if (absl::Status s = open_for("barrier"); !s.ok()) return s;
  absl::StatusOr<std::uint64_t> instance = queue_.next_barrier(channel);
  if (!instance.ok()) return instance.status();
  if (absl::Status s =
          builder_.add_group(op_code::barrier, channel, static_cast<std::uint8_t>(mode), *instance);
      !s.ok()) {
    return s;
  }
  queue_.started_barrier(channel);
  return absl::OkStatus();
}

absl::Status shared_memory_manager::group_op(node_id source, const op_header& op,
                                             std::span<const std::byte> payload,
                                             std::uint64_t instance) {
  switch (op.code) {
    case op_code::queued:
      queue_.message(source, payload);
      return absl::OkStatus();
    case op_code::signal:
      return queue_.signal(source, static_cast<channel_id>(op.address));
    case op_code::barrier:
      return queue_.arrival(source, static_cast<channel_id>(op.address),
                            static_cast<barrier_mode>(op.width), instance);
    default:
      return absl::InvalidArgumentError(
          absl::StrFormat("node %u sent operation %u as a group operation", source,
                          static_cast<unsigned>(op.code)));
  }
}

absl::Status shared_memory_manager::end() {
  if (absl::Status s = check_open("end"); !s.ok()) return s;
  if (lone_read_.active) {
    absl::StatusOr<bool> served = serve_lone_read();
    if (!served.ok()) {
      builder_.close();
      return served.status();
    }
    if (*served) {
      lone_read_.active = false;
      builder_.close();
      return absl::OkStatus();
    }
    if (absl::Status s = add_lone_read(); !s.ok()) return s;
  }
  builder_.close();
  if (absl::Status s = reserve_self_queue(builder_.queued_to_self()); !s.ok()) return s;
  const std::vector<node_id>& remote = builder_.remote_destinations();
  const std::span<const std::byte> local_stream = builder_.stream(self_);
  if (remote.empty()) {
    if (local_stream.empty()) return absl::OkStatus();
    // Purely local: runs at once (straight from the builder, no copy) when nothing this
    // node issued is still pending; otherwise right behind the pending one.
    if (hit_.empty()) return run_local_now(local_stream);
    // Relaxed mode gives up SC here, on purpose: the reads skip ahead of this node's
    // pending isochrons and see the local copies as they stand.
    if (options_.relaxed && builder_.reads_only()) return run_local_now(local_stream);
    // ... and its writes reach this node's copies at once; the rest waits its turn.
    const bool early = options_.relaxed;
    if (early) {
      if (absl::Status s = apply_writes_now(self_, through_, local_stream); !s.ok()) return s;
    }
    hit_.push_back({false, 0, builder_.rank(), {local_stream.begin(), local_stream.end()}, early});
    return absl::OkStatus();
  }
  if (options_.direct_reads && !options_.relaxed && remote.size() == 1 && local_stream.empty() &&
      hit_.empty() && builder_.reads_only() &&
      window_reads_.note_stream(remote.front(), builder_.stream(remote.front()))) {
    absl::StatusOr<bool> served = serve_direct_reads(remote.front());
    if (!served.ok()) return served.status();
    if (*served) return absl::OkStatus();
  }
  std::vector<std::byte> local(local_stream.begin(), local_stream.end());
  std::vector<nicfw::isochron_part>& parts = scratch_parts_;
  parts.clear();
  for (node_id n : remote) parts.push_back({n, builder_.stream(n)});
  const std::uint32_t sequence = next_sequence_++;
  const std::size_t total_bytes = builder_.total_bytes();
  if (total_bytes + 64 * parts.size() > nic_.channel().max_record()) {
    self_queued_ -= builder_.queued_to_self();  // the isochron is lost: so are its messages
    return absl::ResourceExhaustedError(
        absl::StrFormat("isochron of %u bytes exceeds the NIC queue's limit of %u", total_bytes,
                        nic_.channel().max_record()));
  }
  // Flow control: every destination must have room for its part before the NIC stamps the
  // isochron (a stamped packet that could not leave would hold up its pulse everywhere).
  nicfw::credit_ledger& credits = nic_.credits();
  auto has_credits = [&] {
    bool all = true;
    for (const nicfw::isochron_part& part : parts) {
      if (credits.host_may_send(part.destination, nicfw::credit_class::isotach,
                                part.operations.size())) {
        continue;
      }
      credits.host_want(part.destination, nicfw::credit_class::isotach, part.operations.size());
      all = false;
    }
    return all;
  };
  if (!has_credits()) {
    if (absl::Status s = wait_for_credits(has_credits, "isochron"); !s.ok()) {
      self_queued_ -= builder_.queued_to_self();
      return s;
    }
  }
  for (const nicfw::isochron_part& part : parts) {
    credits.host_consume(part.destination, nicfw::credit_class::isotach, part.operations.size());
  }
  if (options_.paranoid) echoes_.expect(sequence, static_cast<std::uint32_t>(parts.size()));
  // Relaxed mode: this node's copies take the isochron's writes now, as the others will
  // when its parts arrive; its local part runs the rest at its logical time.
  const bool early = options_.relaxed && !local.empty();
  if (early) {
    if (absl::Status s = apply_writes_now(self_, through_, local); !s.ok()) return s;
  }
  hit_.push_back({true, sequence, builder_.rank(), std::move(local), early});
  while (!nic_.channel().host_submit_isochron(sequence, builder_.delta(), parts)) {
    bool did = false;
    if (absl::Status s = loop_.progress(did); !s.ok()) return s;
    nic_.wake();
    std::this_thread::yield();
  }
  nic_.wake();
  // A stream of isochrons leaves in batches (progress_after_call), except from a node that
  // slept in a wait, whose NIC must first rejoin logical time.
  if (absl::Status s = loop_.send_now_if_parked(); !s.ok()) return s;
  return progress_after_call(total_bytes);
}

absl::Status shared_memory_manager::run_local_now(std::span<const std::byte> stream) {
  if (last_.pulse > through_) {
    // A same-host read of this node's sat at a later pulse than this node's copies stand
    // now (another node's copies were further on): catch up first.
    if (absl::Status s = sync_to(last_.pulse); !s.ok()) return s;
    return run_local_now(stream);
  }
  std::uint64_t step = local_step();
  if (!builder_.reads_only()) {
    // Its changes sit no earlier than any reader of this window has read it up to: the
    // change section opens first, and its step counts what readers raised before.
    window_.begin_change();
    step = window_.change_step(step);
  }
  const order_point at = local_point(step);
  queue_.begin_batch(through_);
  absl::Status s = run_stream(self_, through_, true, stream, write_pass::normal, step);
  // Readers of this window sit before or after it if it may have changed something here.
  if (window_.changing()) window_.publish_next_local(builder_.rank() + 1);
  window_.end_change();
  queue_.end_batch();
  last_ = at;
  if (!s.ok()) return s;
  return progress_after_call();
}

void shared_memory_manager::set_handler(std::uint32_t handler, message_handler fn) {
  // From inside a handler: the map must not change under the function that runs (a
  // rehash moves it; an erase destroys it). The change waits until it returns.
  if (running_handler_) {
    deferred_handlers_.emplace_back(handler, std::move(fn));
    return;
  }
  // An empty one would be called, and throw, when a message comes.
  if (!fn) {
    handlers_.erase(handler);
    return;
  }
  handlers_[handler] = std::move(fn);
}

absl::Status shared_memory_manager::send_direct(node_id to,
                                                std::span<const comm::byte_span> pieces) {
  return loop_.submit(nicfw::submission_kind::direct, to, pieces);
}

void shared_memory_manager::free_notice(const notice& n) {
  if (n.what != notice::kind::message) return;
  if (n.source == self_) {
    self_queued_ -= std::min(self_queued_, n.bytes.size());
    return;
  }
  nic_.credits().host_free(n.source, nicfw::credit_class::isotach, n.bytes.size());
}

absl::Status shared_memory_manager::reserve_self_queue(std::size_t bytes) {
  if (bytes == 0) return absl::OkStatus();
  // Messages to oneself never cross the NIC, but they wait in the receive queue until the
  // application takes them, like everyone else's: the same window bounds them (a message
  // larger than the window goes when none is waiting).
  const std::uint64_t window = nic_.credits().window();
  auto fits = [&] { return self_queued_ == 0 || self_queued_ + bytes <= window; };
  if (!fits()) {
    if (absl::Status s = wait_for_credits(fits, "isochron"); !s.ok()) return s;
  }
  self_queued_ += bytes;
  return absl::OkStatus();
}

absl::Status shared_memory_manager::wait_for_credits(absl::FunctionRef<bool()> has_credits,
                                                     const char* what) {
  return runtime::wait_for_credits(loop_, options_.credit_timeout, has_credits, what, [&] {
    std::string stuck;
    if (self_queued_ > 0) {
      absl::StrAppendFormat(&stuck, " node %u (itself) holds %u bytes of isotach messages", self_,
                            self_queued_);
    }
    return stuck;
  });
}

void shared_memory_manager::read_result(node_id reader, std::uint32_t slot, std::uint32_t first,
                                        std::span<const std::uint64_t> values) {
  if (reader == self_) {
    absl::Status s = slots_.fill(slot, first, values);
    ISO_CHECK(s.ok()) << "local read result: " << s;
    return;
  }
  const read_reply_header header{
      .slot = slot, .first = first, .count = static_cast<std::uint32_t>(values.size())};
  const comm::byte_span pieces[2] = {std::as_bytes(std::span(&header, 1)), std::as_bytes(values)};
  if (absl::Status s = send_direct(reader, pieces); !s.ok()) loop_.fail(s);
}

absl::Status shared_memory_manager::send_echo(node_id issuer, std::uint32_t sequence,
                                              std::uint64_t pulse) {
  const echo_packet e{.sequence = sequence, .pulse = pulse};
  const comm::byte_span piece = std::as_bytes(std::span(&e, 1));
  return send_direct(issuer, std::span(&piece, 1));
}

absl::Status shared_memory_manager::run_handler(node_id source, std::uint32_t handler,
                                                std::span<const std::byte> payload) {
  auto it = handlers_.find(handler);
  if (it == handlers_.end()) {
    return absl::NotFoundError(absl::StrFormat(
        "isochronous message from node %u for handler %u, which is not registered here", source,
        handler));
  }
  // A handler's exception must not unwind through a pulse half executed: it becomes the
  // pulse's error, which stops this node with the handler named.
  const char* const outside = loop_.forbidden_inside();
  loop_.forbid_progress("a message handler");
  absl::Status result;
  running_handler_ = true;
  absl::Cleanup apply_deferred = [this] {
    running_handler_ = false;
    std::vector<std::pair<std::uint32_t, message_handler>> changes;
    changes.swap(deferred_handlers_);
    for (auto& [id, fn] : changes) set_handler(id, std::move(fn));
  };
  try {
    it->second(source, payload);
  } catch (const abi::__forced_unwind&) {
    loop_.forbid_progress(outside);
    throw;  // thread cancellation must unwind
  } catch (const std::exception& e) {
    result = absl::AbortedError(absl::StrFormat(
        "the handler for id %u (message from node %u) threw: %s", handler, source, e.what()));
  } catch (...) {
    result = absl::AbortedError(
        absl::StrFormat("the handler for id %u (message from node %u) threw", handler, source));
  }
  loop_.forbid_progress(outside);
  return result;
}

void shared_memory_manager::executed_rmw(const exec_position& at, std::uint32_t op_index,
                                         op_code code, std::uint64_t address, std::uint64_t old,
                                         std::uint64_t stored) {
  executed(at, op_index, code, address, old);
  trace_.back().stored = stored;
}

void shared_memory_manager::executed(const exec_position& at, std::uint32_t op_index, op_code code,
                                     std::uint64_t address, std::uint64_t value) {
  const std::uint32_t nodes = nic_.topo().nodes();
  const std::uint32_t pid = at.pid >= nodes ? at.pid - nodes : at.pid;
  trace_.push_back({.pulse = at.pulse,
                    .after_pulse = at.pid >= nodes,
                    .step = at.step,
                    .pid = pid,
                    .rank = at.rank,
                    .op_index = op_index,
                    .op = static_cast<trace_op>(code),
                    .address = address,
                    .value = value,
                    .node = self_,
                    .issuer = pid,
                    .issue_rank = at.rank});
}

void shared_memory_manager::on_delivery(const nicfw::delivery& d) {
  switch (d.kind) {
    case nicfw::delivery_kind::iso_data:
    case nicfw::delivery_kind::closing_data:
      nic_.credits().host_received(d.source, nicfw::credit_class::isotach, d.payload.size());
      if (options_.relaxed) [[unlikely]] {
        on_relaxed_arrival(d);
        return;
      }
      if (d.kind == nicfw::delivery_kind::closing_data && d.count == 1 && due_pulses_.empty() &&
          loop_.failure().ok()) {
        // The pulse's only item, and every earlier pulse has run (their EOPs came first): it
        // runs straight from the queue, with no copy into a bucket.
        absl::Status s = execute_pulse(d.stamp, [&] {
          return run_remote_part(d.stamp, d.source, d.sequence, d.payload, false);
        });
        if (!s.ok()) loop_.fail(s);
        return;
      }
      // Until this round of progress ends the remote part stays where the NIC put it: if its
      // pulse's EOP comes in the same batch of deliveries, it never needs a copy.
      nic_.channel().host_hold();
      buckets_.add_held(d.stamp, d.source, d.sequence, d.payload, d.record);
      if (d.kind == nicfw::delivery_kind::closing_data) due_pulses_.emplace_back(d.stamp, d.count);
      return;
    case nicfw::delivery_kind::marker:
      if (options_.paranoid) {
        for (std::uint32_t i = 0; i < d.count; ++i) echoes_.marker(d.sequence + i, d.stamp);
      }
      last_stamp_ = std::max(last_stamp_, d.stamp);
      buckets_.add_marker(d.stamp, self_, d.sequence, d.count);
      return;
    case nicfw::delivery_kind::eop:
      due_pulses_.emplace_back(d.stamp, d.count);
      return;
    case nicfw::delivery_kind::direct: {
      if (d.payload.empty()) break;
      const auto tag = static_cast<direct_tag>(d.payload[0]);
      if (tag == direct_tag::read_reply && d.payload.size() >= sizeof(read_reply_header)) {
        read_reply_header h;
        std::memcpy(&h, d.payload.data(), sizeof(h));
        if (d.payload.size() != sizeof(h) + std::size_t{h.count} * 8) break;
        std::vector<std::uint64_t> values(h.count);
        if (h.count != 0) {
          std::memcpy(values.data(), d.payload.data() + sizeof(h), values.size() * 8);
        }
        if (absl::Status s = slots_.fill(h.slot, h.first, values); !s.ok()) {
          loop_.fail(absl::InvalidArgumentError(
              absl::StrFormat("from node %u: %s", d.source, s.message())));
        }
        return;
      }
      if (tag == direct_tag::echo && d.payload.size() == sizeof(echo_packet)) {
        echo_packet e;
        std::memcpy(&e, d.payload.data(), sizeof(e));
        if (absl::Status s = echoes_.check(d.source, e.sequence, e.pulse); !s.ok()) {
          loop_.fail(s);
        }
        return;
      }
      break;
    }
    default:
      break;
  }
  loop_.fail(malformed_direct_packet(d));
}

void shared_memory_manager::on_relaxed_arrival(const nicfw::delivery& d) {
  // The part's plain writes change this node's copies now, before their pulse; the part
  // still waits in its bucket, and its pulse runs the rest (reads, messages, ...).
  if (absl::Status s = apply_writes_now(d.source, d.stamp, d.payload); !s.ok()) {
    loop_.fail(s);
    return;
  }
  nic_.channel().host_hold();
  buckets_.add_held(d.stamp, d.source, d.sequence, d.payload, d.record, true);
  if (d.kind == nicfw::delivery_kind::closing_data) due_pulses_.emplace_back(d.stamp, d.count);
}

absl::Status shared_memory_manager::apply_writes_now(node_id source, std::uint64_t pulse,
                                                     std::span<const std::byte> stream) {
  absl::Status s = run_stream(source, pulse, source == self_, stream, write_pass::early);
  window_.end_change();
  return s;
}

absl::Status shared_memory_manager::run_stream(node_id source, std::uint64_t pulse,
                                               bool after_pulse, std::span<const std::byte> stream,
                                               write_pass pass, std::uint64_t step) {
  op_reader in(stream);
  stream_header header;
  if (!in.get(header)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("operation stream from node %u has no header", source));
  }
  const std::uint32_t nodes = nic_.topo().nodes();
  const exec_position at{pulse, step, after_pulse ? nodes + source : source, header.rank};
  return memory_.execute(source, at, stream.subspan(sizeof(header)), *this, pass);
}

absl::Status shared_memory_manager::run_local_part(const local_part& part, std::uint64_t pulse,
                                                   bool after_pulse) {
  if (part.ops.empty()) return absl::OkStatus();
  return run_stream(self_, pulse, after_pulse, part.ops,
                    part.writes_applied ? write_pass::again : write_pass::normal);
}

absl::Status shared_memory_manager::run_pulse(std::uint64_t pulse, std::uint32_t count) {
  std::vector<bucket_item> items = buckets_.take(pulse);
  ISO_CHECK(items.size() == count) << "EOP for pulse " << pulse << " counts " << count
                                   << " items, the bucket holds " << items.size();
  // (pulse, pid, rank): per sender the bucket is already in rank order (FIFO), so a stable
  // sort by sender is the whole ordering.
  // Usually there is one sender, and then nothing to sort (stable_sort would still allocate).
  auto by_sender = [](const bucket_item& a, const bucket_item& b) { return a.source < b.source; };
  if (!std::is_sorted(items.begin(), items.end(), by_sender)) {
    std::stable_sort(items.begin(), items.end(), by_sender);
  }
  absl::Status executed = execute_pulse(pulse, [&] { return run_items(pulse, items); });
  for (const bucket_item& item : items) {
    if (item.held) nic_.channel().host_release(item.record);
  }
  buckets_.recycle(std::move(items));
  return executed;
}

absl::Status shared_memory_manager::execute_pulse(std::uint64_t pulse,
                                                  absl::FunctionRef<absl::Status()> run) {
  queue_.begin_batch(pulse);
  absl::Status executed = run();
  if (executed.ok()) {
    // Inside the change section, if the pulse changed anything here: a reader must never
    // see the new values with the old stand (it would place them in the previous pulse).
    advance_through(pulse);
  }
  window_.end_change();
  queue_.end_batch();
  return executed;
}

absl::Status shared_memory_manager::run_items(std::uint64_t pulse,
                                              std::span<const bucket_item> items) {
  for (const bucket_item& item : items) {
    if (!item.own_marker) {
      if (absl::Status s = run_remote_part(pulse, item.source, item.sequence, item.operations(),
                                           item.writes_applied);
          !s.ok()) {
        return s;
      }
      continue;
    }
    for (std::uint32_t i = 0; i < item.isochrons; ++i) {
      const std::uint32_t sequence = item.sequence + i;
      ISO_CHECK(!hit_.empty() && hit_.front().net && hit_.front().sequence == sequence)
          << "isochron marker " << sequence << " does not match the oldest pending isochron";
      if (absl::Status s = run_local_part(hit_.front(), pulse, false); !s.ok()) return s;
      last_ = {pulse, 0, self_, hit_.front().rank, 1};
      hit_.pop_front();
      // Purely local isochrons issued after it run right behind it.
      while (!hit_.empty() && !hit_.front().net) {
        if (absl::Status s = run_local_part(hit_.front(), pulse, false); !s.ok()) return s;
        last_ = {pulse, 0, self_, hit_.front().rank, 1};
        hit_.pop_front();
      }
    }
  }
  return absl::OkStatus();
}

absl::Status shared_memory_manager::run_remote_part(std::uint64_t pulse, node_id source,
                                                    std::uint32_t sequence,
                                                    std::span<const std::byte> ops,
                                                    bool writes_applied) {
  const std::size_t queued_before = queue_.payload_bytes();
  if (absl::Status s = run_stream(source, pulse, false, ops,
                                  writes_applied ? write_pass::again : write_pass::normal);
      !s.ok()) {
    return s;
  }
  // What went into the receive queue stays charged until the application takes it.
  const std::size_t queued = queue_.payload_bytes() - queued_before;
  nic_.credits().host_free(source, nicfw::credit_class::isotach,
                           ops.size() + nicfw::kPacketOverhead - queued);
  if (!options_.paranoid) return absl::OkStatus();
  return send_echo(source, sequence, pulse);
}

absl::Status shared_memory_manager::end_round(std::uint64_t closed, bool& did_work) {
  (void)did_work;  // the deliveries were the work
  // Most rounds of a waiting node run no pulse and move no time: they must cost little.
  absl::Status result = loop_.failure();
  if (result.ok() && (!due_pulses_.empty() || closed > through_)) {
    result = run_due_pulses(closed);
  }
  // Remote parts were filed in place (on_delivery); what still waits for a later EOP when
  // this round ends moves out of the host queue, whose space behind a held record the NIC
  // cannot reuse.
  buckets_.unhold([this](const bucket_item& item) { nic_.channel().host_release(item.record); });
  return result;
}

absl::Status shared_memory_manager::run_due_pulses(std::uint64_t closed) {
  if (!loop_.failure().ok()) return loop_.failure();
  for (std::size_t i = 0; i < due_pulses_.size(); ++i) {
    if (absl::Status s = run_pulse(due_pulses_[i].first, due_pulses_[i].second); !s.ok()) {
      return s;
    }
  }
  due_pulses_.clear();
  advance_through(closed);
  return absl::OkStatus();
}

absl::Status shared_memory_manager::progress_after_call(std::size_t bytes) {
  // A NIC on its own thread closes pulses without this node: a round helps only once it
  // has (inline, the round is what lets it).
  const bool wanted =
      window_.wanted() > through_ && (nic_.runs_inline() || nic_.time().closed > through_);
  if (!wanted || loop_.progress_forbidden()) return loop_.progress_now_and_then(bytes);
  bool did = false;
  return loop_.progress(did);
}

void shared_memory_manager::advance_through(std::uint64_t pulse) {
  if (pulse <= through_) return;
  through_ = pulse;
  window_.publish_through(pulse);
}

absl::Status shared_memory_manager::sync_to(std::uint64_t pulse) {
  if (pulse == 0) return absl::OkStatus();
  nic_.demand(pulse + 1);
  // progress() advances through_ only after draining the queue as it stood when the NIC had
  // closed that far and running the due pulses, so this waits for exactly what is needed;
  // waiting for an empty queue instead could wait forever on a busy NIC.
  return loop_.wait_for([&] { return through_ >= pulse; });
}

absl::Status shared_memory_manager::drain_issued() {
  return loop_.wait_for([this] { return hit_.empty(); });
}

absl::Status shared_memory_manager::drain() {
  return loop_.wait_for([this] { return hit_.empty() && slots_.outstanding() == 0; });
}

}  // namespace iso::runtime
