// The shared memory manager (SMM): the host side of isotach. It builds isochrons, hands
// their remote parts to the NIC, files what arrives into pulse buckets, and when the NIC
// says a pulse is over (EOP) executes that pulse's operations in (pid, rank) order, running
// this node's own local parts when their isochron markers come up (Regehr, section 3.2).
// It is a unit of the node's event loop (runtime/progress/event_loop.hpp), which hands it
// the isotach deliveries and read replies, and which makes all progress.
//
//   read_slots::ticket t;
//   ISO_RETURN_IF_ERROR(smm.begin());
//   ISO_RETURN_IF_ERROR(smm.write(8, address, values));
//   ISO_RETURN_IF_ERROR(smm.read(8, other_address, 1, t));
//   ISO_RETURN_IF_ERROR(smm.end());
//   ISO_RETURN_IF_ERROR(loop.wait_for([&] { return smm.ready(t); }));
//
// One thread uses an SMM (the node's application thread).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "iso/trace.hpp"
#include "nicfw/engine.hpp"
#include "runtime/progress/event_loop.hpp"
#include "runtime/smm/echo_checker.hpp"
#include "runtime/smm/isochron_builder.hpp"
#include "runtime/smm/local_memory.hpp"
#include "runtime/smm/order_point.hpp"
#include "runtime/smm/page_table.hpp"
#include "runtime/smm/pulse_buckets.hpp"
#include "runtime/smm/read_slots.hpp"
#include "runtime/smm/receive_queue.hpp"
#include "runtime/smm/same_host_reads.hpp"

namespace iso::runtime {

using message_handler = std::function<void(node_id source, std::span<const std::byte> payload)>;

struct smm_options {
  std::uint32_t page_variables = 512;
  bool trace = false;
  // How long a sender waits for flow-control credits before it reports the receiver.
  absl::Duration credit_timeout = absl::Seconds(60);
  // Echo the executed pulse of every remote part to its issuer, which checks it.
  bool paranoid = false;
  // Same-host reads: every node's memory window, by node id (empty where there is none);
  // this node keeps its copies in its own. A read-only isochron whose reads all go to one
  // node with a window is served from that node's copy when logical time allows
  // (docs/same-host-reads.md).
  std::vector<std::span<std::byte>> windows;
  bool direct_reads = true;
  // Relaxed mode (iso::options::relaxed; not sequentially consistent, for teaching): plain
  // writes are applied at each copy when they arrive (at the issuer's own copy when the
  // isochron ends), and again at their logical time; a read-only isochron of this node's
  // copies is served at once from them as they stand, and reads of other nodes' copies take
  // the NIC (no same-host reads). Everything else (reads of other isochrons,
  // read-modify-writes, sched/assign, messages, signals, barriers) runs at its logical time
  // only.
  bool relaxed = false;
};

class shared_memory_manager final : public execution_sink, public delivery_unit {
 public:
  // Registers with `loop`, whose NIC it uses.
  shared_memory_manager(node_id self, event_loop& loop, const smm_options& options);

  [[nodiscard]] node_id self() const { return self_; }
  [[nodiscard]] const page_table& pages() const { return pages_; }

  // Collective: every node makes the same calls in the same order.
  [[nodiscard]] absl::StatusOr<std::uint64_t> allocate(std::uint64_t count, std::uint8_t width,
                                                       const copyset_rule& rule);

  // Isochrons. FailedPrecondition: begin() while one is open, or an operation or end()
  // while none is, or from inside a message handler.
  [[nodiscard]] absl::Status begin();
  [[nodiscard]] absl::Status read(std::uint8_t width, std::uint64_t address, std::uint32_t count,
                                  read_slots::ticket& ticket);
  [[nodiscard]] absl::Status write(std::uint8_t width, std::uint64_t address,
                                   std::span<const std::uint64_t> values);
  // FailedPrecondition when this node already has an outstanding sched on the address.
  [[nodiscard]] absl::Status sched(std::uint8_t width, std::uint64_t address);
  // FailedPrecondition when this node has no outstanding sched on the address.
  [[nodiscard]] absl::Status assign(std::uint8_t width, std::uint64_t address, std::uint64_t value);
  // An atomic read-modify-write (fetch_add, exchange, compare_exchange) of one variable,
  // at every copy at the isochron's logical time; the nearest copy answers the old value
  // in `ticket`'s slot. `operands`: rmw_operands(code) values.
  [[nodiscard]] absl::Status read_modify_write(op_code code, std::uint8_t width,
                                               std::uint64_t address,
                                               std::span<const std::uint64_t> operands,
                                               read_slots::ticket& ticket);
  // NotFound when no handler is registered under `handler` (handlers are registered alike
  // on every node).
  [[nodiscard]] absl::Status message(node_id to, std::uint32_t handler,
                                     std::span<const std::byte> payload);
  // The same message for handler `handler` at each node of `to` (distinct), as one
  // operation: added whole or not at all.
  [[nodiscard]] absl::Status message(std::span<const node_id> to, std::uint32_t handler,
                                     std::span<const std::byte> payload);
  // A message for `to`'s isotach receive queue.
  [[nodiscard]] absl::Status queued_message(node_id to, std::span<const std::byte> payload);
  // A signal on `channel` to every node. InvalidArgument for a bad channel.
  [[nodiscard]] absl::Status signal(channel_id channel);
  // This node's arrival at the next barrier on `channel`, to every node. FailedPrecondition
  // while its previous barrier there has not completed here.
  [[nodiscard]] absl::Status barrier_arrival(channel_id channel, barrier_mode mode);
  // Issues the isochron. Blocks (polling) only while the NIC's queue is full.
  [[nodiscard]] absl::Status end();
  [[nodiscard]] bool in_isochron() const { return builder_.open(); }

  // Switches relaxed mode (smm_options::relaxed) for the isochrons issued and delivered
  // from now on; what was already applied early stays applied once.
  void set_relaxed(bool on) { options_.relaxed = on; }
  [[nodiscard]] bool relaxed() const { return options_.relaxed; }

  void set_handler(std::uint32_t handler, message_handler fn);

  // The isotach receive queue.
  [[nodiscard]] receive_queue& notices() { return queue_; }

  // Read results.
  [[nodiscard]] bool ready(read_slots::ticket t) const { return slots_.ready(t); }
  [[nodiscard]] std::span<const std::uint64_t> values(read_slots::ticket t) const {
    return slots_.values(t);
  }
  void close(read_slots::ticket t) { slots_.close(t); }
  // Whether the read `t` was issued while this node had a sched of its variable that it has
  // not assigned since (cheap: only such reads can wait for this node's own assign).
  [[nodiscard]] bool issued_behind_own_sched(read_slots::ticket t) const {
    return unassigned_sched_before(t) != nullptr;
  }
  // The address of such a read, when it waits here, in this node's copy, for the assign of
  // that very sched: only this node can end the wait. None while it may still be answered
  // otherwise (its copy is elsewhere, or it has not executed yet).
  [[nodiscard]] std::optional<std::uint64_t> waits_on_own_sched(read_slots::ticket t) const;
  // Once this node's own isochrons have executed here (drain_issued): FailedPrecondition,
  // naming `when`, if reads wait in this node's copies for the assign of a sched it has not
  // assigned (after `when` it never will); OK otherwise.
  [[nodiscard]] absl::Status check_no_read_awaits_own_assign(std::string_view when) const;
  // A slot for an answer that is not a read's (node::quiet's fences), filled by read_result.
  [[nodiscard]] read_slots::ticket open_slot(std::uint32_t count) { return slots_.open(count); }
  // How many values an open slot takes.
  [[nodiscard]] std::size_t slot_size(std::uint32_t slot) const { return slots_.size(slot); }

  // The largest message payload (handler-style or queued): what fits one NIC queue record
  // with the headers around it.
  [[nodiscard]] std::size_t max_message_size() const { return nic_.channel().max_record() - 256; }

  // The application took a notice: its buffer space goes back to the sender.
  void free_notice(const notice& n);

  // Until every isochron this node issued has executed here and every read has arrived.
  [[nodiscard]] absl::Status drain();
  // Until every isochron this node issued has executed here (reads may still wait: one
  // may be waiting for an assign that another node has yet to issue).
  [[nodiscard]] absl::Status drain_issued();

  // Until every pulse up to `pulse` has executed here (the NIC is asked to advance logical
  // time that far if nobody else does).
  [[nodiscard]] absl::Status sync_to(std::uint64_t pulse);
  // The latest logical time this node's isochrons were stamped with (0: none yet).
  [[nodiscard]] std::uint64_t last_stamp() const { return last_stamp_; }

  [[nodiscard]] const std::vector<trace_event>& trace() const { return trace_; }
  // Isochrons served as same-host reads.
  [[nodiscard]] std::uint64_t direct_reads() const { return direct_reads_; }
  // Every pulse up to this has executed here (and nothing later has).
  [[nodiscard]] std::uint64_t through() const { return through_; }
  [[nodiscard]] std::size_t pulses_waiting() const { return buckets_.size(); }
  // delivery_unit: the isotach deliveries, read replies and echoes; at the end of a round,
  // the pulses whose EOPs came.
  void on_delivery(const nicfw::delivery& d) override;
  [[nodiscard]] absl::Status end_round(std::uint64_t closed, bool& did_work) override;

  // execution_sink
  void read_result(node_id reader, std::uint32_t slot, std::uint32_t first,
                   std::span<const std::uint64_t> values) override;
  [[nodiscard]] absl::Status run_handler(node_id source, std::uint32_t handler,
                                         std::span<const std::byte> payload) override;
  void executed(const exec_position& at, std::uint32_t op_index, op_code code,
                std::uint64_t address, std::uint64_t value) override;
  void executed_rmw(const exec_position& at, std::uint32_t op_index, op_code code,
                    std::uint64_t address, std::uint64_t old, std::uint64_t stored) override;
  [[nodiscard]] bool tracing() const override { return options_.trace; }
  [[nodiscard]] absl::Status group_op(node_id source, const op_header& op,
                                      std::span<const std::byte> payload,
                                      std::uint64_t instance) override;

 private:
  struct local_part {
    bool net;                // has a remote part: runs when its marker comes up
    std::uint32_t sequence;  // net only
    std::uint64_t rank;
    std::vector<std::byte> ops;
    bool writes_applied = false;  // relaxed mode applied its plain writes early, at issue
  };

  [[nodiscard]] absl::Status check_open(const char* what) const;
  // A read's slot whose operation was refused: closed, and counted as answered.
  void abandon_slot(read_slots::ticket t, std::uint32_t count);
  // Runs the purely local isochron being closed, after every operation of `through_`.
  [[nodiscard]] absl::Status run_local_now(std::span<const std::byte> stream);
  // Where the purely local isochron being closed sits if it runs now at `step`: after
  // every operation of `through_`.
  [[nodiscard]] order_point local_point(std::uint64_t step) const {
    return {through_, step, nic_.topo().nodes() + self_, builder_.rank(), 1};
  }
  // The lowest step at which it sits after everything this node has seen (last_); needs
  // last_.pulse <= through_.
  [[nodiscard]] std::uint64_t local_step() const {
    return step_from(last_, through_, nic_.topo().nodes() + self_, builder_.rank(), 1, true);
  }
  // After a call that completed without waiting: a round now while a same-host reader
  // waits for this node's copies to move on (copy_window::wanted), else now and then.
  [[nodiscard]] absl::Status progress_after_call(std::size_t bytes = 0);
  // Runs the pulses the round made due, then moves this node's time to `closed`.
  [[nodiscard]] absl::Status run_due_pulses(std::uint64_t closed);
  void advance_through(std::uint64_t pulse);
  // check_open, then the noted lone read goes into the builder (another operation follows).
  [[nodiscard]] absl::Status open_for(const char* what);
  [[nodiscard]] absl::Status add_lone_read();
  // Serves the isochron being closed, a lone read, at once: from this node's copy, or
  // from another's window; false when it cannot (the caller takes the general path).
  [[nodiscard]] absl::StatusOr<bool> serve_lone_read();
  // Serves the reads noted in window_reads_ from `owner`'s window when logical time
  // allows; false when it does not (the caller sends the isochron through the NIC).
  [[nodiscard]] absl::StatusOr<bool> serve_direct_reads(node_id owner);
  [[nodiscard]] absl::Status run_pulse(std::uint64_t pulse, std::uint32_t count);
  [[nodiscard]] absl::Status run_items(std::uint64_t pulse, std::span<const bucket_item> items);
  // Executes pulse `pulse` (`run` runs its items) as one batch of the receive queue and one
  // change of this node's window, and moves the stand to it.
  [[nodiscard]] absl::Status execute_pulse(std::uint64_t pulse,
                                           absl::FunctionRef<absl::Status()> run);
  // Runs the remote part `ops` of `source`'s isochron `sequence` at `pulse`, then frees its
  // credits (all but what it queued) and, in paranoid mode, echoes the pulse to `source`.
  [[nodiscard]] absl::Status run_remote_part(std::uint64_t pulse, node_id source,
                                             std::uint32_t sequence, std::span<const std::byte> ops,
                                             bool writes_applied);
  // `step`: for a purely local isochron run after `pulse` (order_point).
  [[nodiscard]] absl::Status run_stream(node_id source, std::uint64_t pulse, bool after_pulse,
                                        std::span<const std::byte> stream,
                                        write_pass pass = write_pass::normal,
                                        std::uint64_t step = 0);
  // Relaxed mode: applies the plain writes of `stream` (an isochron of `source`, stamped
  // `pulse`; this node's own: issued after pulse `pulse`) to this node's copies now; they
  // are applied again, unrecorded, at their logical time.
  [[nodiscard]] absl::Status apply_writes_now(node_id source, std::uint64_t pulse,
                                              std::span<const std::byte> stream);
  // Relaxed mode: on_delivery's part for a remote part that just arrived.
  void on_relaxed_arrival(const nicfw::delivery& d);
  [[nodiscard]] absl::Status run_local_part(const local_part& part, std::uint64_t pulse,
                                            bool after_pulse);
  [[nodiscard]] absl::Status send_direct(node_id to, std::span<const comm::byte_span> pieces);
  // Waits, making progress, until `has_credits()`; DeadlineExceeded after credit_timeout,
  // naming the peers that hold this node's credits.
  [[nodiscard]] absl::Status wait_for_credits(absl::FunctionRef<bool()> has_credits,
                                              const char* what);
  // Flow control of messages to this node's own receive queue: waits (as for credits)
  // until `bytes` more fit the window beside what the application has not taken yet.
  [[nodiscard]] absl::Status reserve_self_queue(std::size_t bytes);
  [[nodiscard]] absl::Status send_echo(node_id issuer, std::uint32_t sequence, std::uint64_t pulse);

  node_id self_;
  event_loop& loop_;
  nicfw::engine& nic_;
  smm_options options_;
  page_table pages_;
  copy_window window_;
  local_memory memory_;
  read_slots slots_;
  isochron_builder builder_;
  std::uint64_t next_rank_ = 0;
  std::uint32_t next_sequence_ = 0;
  // This node's scheds not yet assigned: address -> the sched's number (scheds_made_).
  absl::flat_hash_map<std::uint64_t, std::uint64_t> outstanding_scheds_;
  std::uint64_t scheds_made_ = 0;
  // Reads issued behind such a sched, by slot: only looked at when a get() would wait.
  struct behind_sched {
    std::uint32_t generation;
    std::uint64_t address;
    std::uint64_t sched;
  };
  absl::flat_hash_map<std::uint32_t, behind_sched> reads_behind_scheds_;
  // Notes `t` in reads_behind_scheds_ when [address, address + count) holds a variable with
  // an outstanding sched of this node's.
  void note_read_behind_sched(read_slots::ticket t, std::uint64_t address, std::uint32_t count);
  // The note of read `t`, while the sched it names is still this node's unassigned one.
  [[nodiscard]] const behind_sched* unassigned_sched_before(read_slots::ticket t) const;
  pulse_buckets buckets_;
  std::vector<nicfw::isochron_part> scratch_parts_;  // end()'s, kept for its capacity
  std::deque<local_part> hit_;                       // local parts not yet executed, in issue order
  std::vector<std::pair<std::uint64_t, std::uint32_t>> due_pulses_;  // EOPs seen, not run
  absl::flat_hash_map<std::uint32_t, message_handler> handlers_;
  bool running_handler_ = false;  // handlers_ must not change: set_handler() defers
  std::vector<std::pair<std::uint32_t, message_handler>> deferred_handlers_;
  receive_queue queue_;
  echo_checker echoes_;
  std::vector<trace_event> trace_;
  // Every pulse up to this has executed here and nothing later has: this node's copies
  // (and its purely local isochrons) sit after it.
  std::uint64_t through_ = 0;
  // The latest place in the order of anything this node issued that has executed.
  order_point last_;
  std::uint64_t direct_reads_ = 0;
  std::uint32_t nearest_distance_ = ~0u;  // logical distance to the nearest other node
  struct lone_read {
    bool active = false;
    std::uint8_t width = 0;
    std::uint64_t address = 0;
    std::uint32_t count = 0;
    std::uint32_t slot = 0;
    const page_info* page = nullptr;
  };
  lone_read lone_read_;  // the open isochron's only operation so far, not yet built
  same_host_reads window_reads_;
  std::vector<std::uint64_t> direct_values_;  // a lone local read's, kept for its capacity
  std::uint64_t last_stamp_ = 0;
  std::size_t self_queued_ = 0;  // bytes of messages to itself not yet taken (free_notice)
};

}  // namespace iso::runtime
