// The emulated NIC of one node: the host channel, the node's transport port, and the NIC
// services it runs (service.hpp). It does what the Myrinet control program and the isotach
// SIU/TM hardware did. The engine itself knows no protocol: it polls the transport, checks
// each packet's header, carries credits and fragments for the types bound to them, and
// dispatches packets by type and host submissions by kind to the service that registered
// them. Built in: isotach time (stamps isochrons, returns isochron markers, forwards
// tokens, releases each pulse to the host with an end-of-pulse marker once nothing more can
// arrive for it), plain unicast, and credits; more are added with add_service().
//
// On its own thread (pinned away from the application when the machine has cores to spare)
// or inline, run by the host's poll loop; the runtime chooses (nic_thread.hpp). The engine
// code is the same either way. Idle, the thread spins for `spin` and then
// sleeps on the transport's doorbell, which packets and host submissions ring.
//
//   engine nic(self, topo, std::move(transport), {});
//   nic.start();                       // thread mode: starts the thread
//   nic.channel().host_submit_isochron(...);  nic.wake();
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "comm/transport.hpp"
#include "nicfw/credit_ledger.hpp"
#include "nicfw/host_channel.hpp"
#include "nicfw/outbound.hpp"
#include "nicfw/service.hpp"
#include "nicfw/topology.hpp"

namespace iso::nicfw {

struct engine_options {
  // Run on a thread of its own (start() starts it), or inline in the host's poll loop.
  bool own_thread = false;
  // How many nodes of the job share this machine (for pinning).
  std::uint32_t local_nodes = 1;
  // This node's index among them (0..local_nodes-1), for pinning.
  std::uint32_t local_index = 0;
  // Record space of each host<->NIC queue; a quarter of it bounds one message or isochron
  // (8 MiB: messages up to about 2 MiB). Pages are touched only as the queues fill.
  std::size_t host_queue_bytes = std::size_t{1} << 23;
  absl::Duration spin = absl::Microseconds(50);
  // Flow control: bytes of each class one node may have in flight to another
  // (credit_ledger.hpp).
  std::uint64_t credit_window = std::uint64_t{1} << 18;
  // Check every packet's sequence number and checksum, and stop at the first violation.
  bool paranoid = false;
};

// Counters and depths for status calls, per peer; readable from the host thread.
struct peer_counts {
  std::uint64_t packets_sent[kPacketTypes] = {};
  std::uint64_t packets_received[kPacketTypes] = {};
  std::size_t backlog = 0;  // packets waiting for the path to the peer
};

// A snapshot of the NIC's logical time, readable from any thread.
struct nic_time {
  std::uint64_t pulse = 0;   // last token this node's SIU sent
  std::uint64_t closed = 0;  // every pulse up to this one is complete here, and its EOP (if
                             // any) is already in the host queue
  // Every isochron this node stamps from now on is stamped at least this plus its distance
  // (siu::stamp_base): above `pulse` while the SIU is parked, since it resumes after the
  // tokens that went out without it.
  std::uint64_t stamp_base = 0;
};

class isotach_time_service;

class engine final : private nic_context {
 public:
  engine(comm::node_id self, std::shared_ptr<const topology> topo,
         std::unique_ptr<comm::transport> transport, const engine_options& options);
  engine(const engine&) = delete;
  engine& operator=(const engine&) = delete;
  ~engine();

  [[nodiscard]] host_channel& channel() { return channel_; }
  [[nodiscard]] bool runs_inline() const { return inline_; }
  [[nodiscard]] const topology& topo() const override { return *topo_; }
  [[nodiscard]] comm::node_id self() const override { return self_; }
  [[nodiscard]] credit_ledger& credits() { return credits_; }
  [[nodiscard]] const engine_options& options() const { return options_; }
  [[nodiscard]] peer_counts counts(comm::node_id peer) const;
  // Deliveries waiting in the NIC because the host queue was full (NIC thread's view).
  [[nodiscard]] std::size_t overflow() const {
    return overflow_size_.load(std::memory_order_relaxed);
  }

  // Adds a NIC service, which owns the packet types and submission kinds of `binding`
  // (the binding's spans must outlive the engine). Before start() only; a type or kind that
  // another service owns is a programming error. The service gets every call from the
  // NIC's thread; build it with context().
  void add_service(std::unique_ptr<nic_service> service, const service_binding& binding);
  // What services use to reach the network and the host.
  [[nodiscard]] nic_context& context() { return *this; }

  // Thread mode: starts the NIC thread. Inline mode: nothing (the host calls poll()).
  void start();

  // Inline mode: one round of NIC work from the host's thread. Sets did_work when anything
  // happened. Returns the NIC's failure, if it has failed.
  [[nodiscard]] absl::Status poll(bool& did_work);
  // Inline mode: only the sending part of a round: what the host submitted goes out now
  // (with the tokens that sending owes), what arrived stays for the next poll(). Cheaper
  // than poll() for a host that has just submitted. Returns the NIC's failure, if any.
  [[nodiscard]] absl::Status send_submitted();
  // Inline mode: hands a submission of `kind` (not an isochron) for `to` straight to its
  // service, without the host queue, and sends it: true when it went. False when anything
  // is queued before it, the network pushes back, or the service declines; nothing was done
  // then, and the host queues it as usual. Returns the NIC's failure, if any.
  [[nodiscard]] absl::StatusOr<bool> send_at_once(submission_kind kind, comm::node_id to,
                                                  std::span<const comm::byte_span> pieces);
  // Whether this node's SIU may stamp isochrons now: false while it is parked or waits for
  // the answers to its unpark (unparking()). An isochron submitted meanwhile waits in the
  // queue; inline, the next round that finds it asks for the unpark, and the first round
  // after the last answer stamps it. Until then nobody can receive it.
  [[nodiscard]] bool may_stamp() const;
  [[nodiscard]] bool unparking() const;
  // Parked, with no unpark asked for yet.
  [[nodiscard]] bool parked() const { return !may_stamp() && !unparking(); }

  // Inline mode: sleeps until a packet arrives or `timeout` passes. An idle SIU parks
  // first, and then it returns at once (the host polls again before it sleeps).
  void wait(absl::Duration timeout);
  // Inline mode: sleeps like wait() but leaves the SIU active, so that a node which will
  // soon issue again need not unpark; others' tokens and data wake it as they arrive.
  void doze(absl::Duration timeout);
  // Inline mode: sleeps until a packet arrives or `timeout` passes, even with submissions
  // waiting (for a host that waits for the answer that lets them go).
  void await_packet(absl::Duration timeout);
  // Inline mode: whether the host waits with nothing to do, and how many other nodes of
  // this host do not (comm::transport::announce_idle, busy_neighbours).
  void announce_idle(bool idle) { transport_->announce_idle(idle); }
  [[nodiscard]] std::optional<std::uint32_t> busy_neighbours(std::uint32_t enough) const {
    return transport_->busy_neighbours(enough);
  }

  // Host -> NIC: someone needs logical time to reach `pulse` (lazy time otherwise stands
  // still). Thread mode: takes effect on the NIC thread's next round, and the NIC rings the
  // host as pulses below `pulse` close, also those that bring it nothing (the host may
  // sleep until they have).
  void demand(std::uint64_t pulse);

  // Host -> NIC: there are new submissions (wakes a sleeping NIC thread). Cheap when awake.
  void wake();

  // Thread mode: from now on, when pulses close while `*wanted` (a pulse number others
  // wait for this host to have run; null: none) lies beyond what had closed, the NIC
  // rings the host as it does for deliveries, so that a host asleep in a wait runs them.
  // Same-host readers wait so for this node's copies (runtime/smm/copy_window.hpp).
  void ring_host_on_close_for(const std::atomic<std::uint64_t>* wanted) {
    wanted_.store(wanted, std::memory_order_release);
  }

  // The first fatal error the NIC met (OK while healthy). Any thread.
  [[nodiscard]] absl::Status failure() const;
  [[nodiscard]] nic_time time() const;

 private:
  struct pending_delivery {
    delivery item;
    std::vector<std::byte> payload;
  };

  // What a packet type is bound to.
  struct type_binding {
    nic_service* service = nullptr;
    const packet_binding* packet = nullptr;
  };

  // nic_context (and the public self() and topo())
  [[nodiscard]] absl::StatusOr<std::uint32_t> send(comm::node_id destination, packet_header header,
                                                   comm::byte_span payload) override;
  void deliver(const delivery& d) override;  // see below
  [[nodiscard]] absl::Status handle_loopback(bool& progressed) override;

  [[nodiscard]] absl::Status poll_once(bool& did_work);
  // The service that takes submissions of `kind`; every kind the host submits has one.
  [[nodiscard]] nic_service& submitter_of(submission_kind kind) const;
  [[nodiscard]] absl::Status take_submissions(bool& did_work);
  [[nodiscard]] absl::Status handle_packet(comm::node_id source, comm::byte_span bytes);
  [[nodiscard]] const char* type_name(packet_type t) const;
  // The binding of `t`; an unbound one (no service) for a type outside the table: the type
  // of a received packet is input.
  [[nodiscard]] const type_binding& binding_of(packet_type t) const {
    static constexpr type_binding kUnbound{};
    const auto index = static_cast<std::size_t>(t);
    return index < bindings_.size() ? bindings_[index] : kUnbound;
  }
  // Paranoid mode: the packet's sequence number and checksum are what they must be.
  [[nodiscard]] absl::Status check_packet(comm::node_id source, const packet_header& header,
                                          comm::byte_span body);
  // Reads the piggy-backed credits of a data packet; the payload follows them.
  [[nodiscard]] absl::StatusOr<comm::byte_span> take_credits(comm::node_id source,
                                                             const packet_header& header,
                                                             comm::byte_span body);
  // Sends `payload` after `header` (and this NIC's freed credits, when the binding carries
  // them) as one packet, or as fragments when the binding is fragmented and the transport
  // cannot carry it whole; returns how many packets went out. OutOfRange for a payload
  // too large for one packet of a type that is not fragmented.
  [[nodiscard]] absl::StatusOr<std::uint32_t> send_pieces(comm::node_id destination,
                                                          packet_header header,
                                                          comm::byte_span payload,
                                                          const packet_binding& binding);
  // Collects fragments from `source`; true (with `whole` set) when the message is complete.
  bool reassemble(comm::node_id source, const packet_header& header, comm::byte_span body,
                  comm::byte_span& whole);
  // Hands `d` to the host, in order with every earlier delivery. An isotach payload's
  // record is written but held back until the next delivery, so that when that is its
  // pulse's EOP the record becomes closing_data and the EOP needs none of its own: the host
  // cannot use the data before the EOP anyway. (nic_context::deliver)
  // Shows the held record, if any, to the host (before anything else is delivered, and at
  // the end of every round).
  void release_held_data();
  void queue_for_host(const delivery& d);
  [[nodiscard]] bool flush_deliveries();
  void fail(const absl::Status& status);
  void thread_main();

  comm::node_id self_;
  std::shared_ptr<const topology> topo_;
  std::unique_ptr<comm::transport> transport_;
  engine_options options_;
  bool inline_;
  host_channel channel_;
  outbound out_;
  credit_ledger credits_;
  std::vector<std::unique_ptr<nic_service>> services_;  // in the order they were added
  std::vector<nic_service*> polled_;                    // those polled every round, in that order
  std::array<type_binding, kPacketTypes> bindings_{};   // by packet type
  std::array<nic_service*, kSubmissionKinds> submitters_{};  // by submission kind
  std::vector<nic_service*> submitted_to_;  // services that saw this round's submissions
  isotach_time_service* time_ = nullptr;
  std::deque<pending_delivery> overflow_;  // deliveries the host queue had no room for
  std::uint64_t held_stamp_ = 0;           // of the record the host channel holds (see deliver())
  bool delivered_since_ring_ = false;
  submission scratch_submission_;
  submission at_once_submission_;
  std::vector<std::byte> at_once_bytes_;
  std::vector<std::byte> loopback_packet_;          // the loopback packet being handled
  std::vector<std::vector<std::byte>> reassembly_;  // per source: fragments so far
  packet_counts received_;
  std::vector<std::uint32_t> expected_sequence_;  // per source (paranoid mode)
  std::atomic<std::size_t> overflow_size_{0};

  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> host_demand_{0};
  std::atomic<std::uint64_t> pulse_{0};
  std::atomic<std::uint64_t> stamp_base_{0};
  std::atomic<const std::atomic<std::uint64_t>*> wanted_{nullptr};  // ring_host_on_close_for
  std::atomic<std::uint64_t> closed_{0};
  mutable absl::Mutex failure_mu_;
  absl::Status failure_ ABSL_GUARDED_BY(failure_mu_);
  std::atomic<bool> failed_{false};
  std::thread thread_;
};

}  // namespace iso::nicfw
