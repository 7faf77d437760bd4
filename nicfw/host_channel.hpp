// The queues between a node's host runtime and its NIC: a send queue (host -> NIC) and a
// receive queue (NIC -> host) of variable-length records, each a lock-free SPSC ring
// (comm/byte_ring.hpp), plus a doorbell the host sleeps on. No locks and no system calls on
// the fast path (docs/hot-path.md).
//
// The receive queue carries isotach data, direct packets, isochron markers and end-of-pulse
// markers in one FIFO, so a marker for pulse R always precedes EOP(R) and EOP(R) follows
// every packet stamped R (the isochron marker queue of the design is folded into it).
//
// Each method is called from one side only, as its name says: host_* by the host thread,
// nic_* by the NIC (its own thread, or the host thread in inline mode).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <vector>

#include "absl/functional/function_ref.h"
#include "comm/byte_ring.hpp"
#include "comm/doorbell.hpp"
#include "comm/resident_memory.hpp"
#include "comm/transport.hpp"

namespace iso::nicfw {

using comm::byte_span;
using comm::node_id;

// One destination's share of an isochron: the host's operations for that node.
struct isochron_part {
  node_id destination;
  byte_span operations;
};

// What the NIC hands the host. NIC services (service.hpp) deliver kinds of their own, from
// kFirstServiceDelivery up; the host's event loop routes each kind to the unit that
// registered for it.
enum class delivery_kind : std::uint8_t {
  iso_data = 1,      // source, stamp, payload: remote operations to execute at pulse `stamp`
  direct = 2,        // source, payload: a non-isotach packet
  marker = 3,        // sequence, count, stamp: this host's isochrons `sequence` to
                     // `sequence + count - 1` execute at `stamp`
  eop = 4,           // stamp = pulse, count = items of that pulse delivered: execute the pulse
  closing_data = 5,  // iso_data, then its pulse's EOP (count as in eop), in one record
};
inline constexpr std::uint8_t kFirstServiceDelivery = 16;
inline constexpr int kDeliveryKinds = 256;

struct delivery {
  delivery_kind kind;
  node_id source = 0;          // iso_data, direct
  std::uint32_t sequence = 0;  // marker: the first isochron; iso_data: the sender's isochron
  std::uint32_t count = 0;     // eop, closing_data; marker: isochrons it covers
  std::uint64_t stamp = 0;     // iso_data, marker, eop
  byte_span payload{};         // iso_data, direct; valid during the upcall only, unless held
  std::uint64_t record = 0;    // names the record for host_release() once it is held
};

// What the host asks of its NIC. NIC services take kinds of their own, from
// kFirstServiceSubmission up (service.hpp).
enum class submission_kind : std::uint8_t {
  isochron = 1,  // an isochron's remote parts, to be stamped and sent
  direct = 2,    // a non-isotach packet for one node
};
inline constexpr std::uint8_t kFirstServiceSubmission = 16;
inline constexpr int kSubmissionKinds = 256;

// A submission the NIC reads from the send queue.
struct submission {
  submission_kind kind = submission_kind::isochron;
  std::uint32_t sequence = 0;  // isochron
  std::uint32_t delta = 0;     // isochron: largest logical distance among its destinations
  // Views into the queue, valid until nic_finish_submission. An isochron has a part per
  // destination; any other kind has one part: its destination and its payload.
  std::vector<isochron_part> parts;
  std::uint64_t end = 0;  // ring position to release
};

class host_channel {
 public:
  // `queue_bytes`: record space of each queue (a power of two); a record may use a quarter.
  explicit host_channel(std::size_t queue_bytes);
  host_channel(const host_channel&) = delete;
  host_channel& operator=(const host_channel&) = delete;

  [[nodiscard]] std::size_t max_record() const;
  // Whether a submission (not an isochron) of `bytes` fits a record of the send queue.
  [[nodiscard]] bool submission_fits(std::size_t bytes) const;

  // Host: queue an isochron with remote parts. False when the queue is full (poll, retry).
  [[nodiscard]] bool host_submit_isochron(std::uint32_t sequence, std::uint32_t delta,
                                          std::span<const isochron_part> parts);
  // Host: queue a submission of `kind` (not an isochron) for `destination`, made of
  // `pieces`. False when the queue is full.
  [[nodiscard]] bool host_submit(submission_kind kind, node_id destination,
                                 std::span<const byte_span> pieces);
  // Host: hands every waiting delivery to `upcall`, in order; returns how many.
  std::size_t host_poll(absl::FunctionRef<void(const delivery&)> upcall);
  // Host, from within host_poll's upcall: keeps the delivery's record (and its payload) in
  // the queue after the upcall returns, until host_release(d.record). Records behind it
  // are handled as usual, but their space is reused only once it is released: a record
  // held for long leaves the NIC less room.
  void host_hold() { hold_current_ = true; }
  void host_release(std::uint64_t record);
  [[nodiscard]] bool host_holds_records() const { return held_.keeps_any(); }
  // Host: sleeps until the NIC delivers something or rings, or `timeout` passes; not at
  // all if `may_sleep()`, asked once the sleep is announced, says no.
  void host_wait(absl::Duration timeout, absl::FunctionRef<bool()> may_sleep);
  // Host: from now on the NIC rings `bell` too where it rings the host (null: no more),
  // for a host about to sleep on another doorbell than this channel's. Set before the host
  // checks whether it may sleep: then either it sees what the NIC did, or the NIC rings.
  void host_also_ring(comm::doorbell* bell) {
    also_ring_.store(bell, std::memory_order_seq_cst);
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  [[nodiscard]] bool host_has_deliveries() const;

  // NIC: the oldest submission, without consuming it; false when there is none. DataLoss
  // is impossible here (host memory is private to the process); a malformed record is a bug.
  [[nodiscard]] bool nic_peek_submission(submission& out);
  void nic_finish_submission(const submission& s);
  // NIC: deliver to the host. False when the receive queue is full (the NIC keeps the item
  // and retries; the host drains the queue whenever it polls).
  [[nodiscard]] bool nic_deliver(const delivery& d);
  // NIC: like nic_deliver, but the host sees the record (and anything delivered after it)
  // only from nic_publish_held() on; nic_close_held() first turns a held iso_data record
  // into closing_data for an EOP counting `count`. One record is held at a time.
  [[nodiscard]] bool nic_deliver_held(const delivery& d);
  void nic_close_held(std::uint32_t count);
  void nic_publish_held() { to_host_producer_.publish_held(); }
  [[nodiscard]] bool nic_holds() const { return to_host_producer_.held_payload() != nullptr; }
  // NIC: wakes a sleeping host after deliveries.
  void nic_ring_host() {
    host_bell_.ring();  // its fence orders what the NIC published before the load below
    if (comm::doorbell* also = also_ring_.load(std::memory_order_relaxed)) also->ring();
  }
  [[nodiscard]] bool nic_has_submissions() const { return to_nic_consumer_.has_pending(); }

 private:
  [[nodiscard]] bool push_delivery(const delivery& d, bool hold);

  // Populated when the channel is built: touched lazily, the queues' first pass took a
  // page fault per 4 KiB page (4096 for two 8 MiB queues), and a job ran its first ~60k
  // pulses at half speed.
  std::size_t queue_bytes_;
  comm::resident_memory to_nic_memory_;
  comm::resident_memory to_host_memory_;
  comm::ring_producer to_nic_producer_;
  comm::ring_consumer to_nic_consumer_;
  comm::ring_producer to_host_producer_;
  comm::ring_consumer to_host_consumer_;
  comm::doorbell host_bell_;
  std::atomic<comm::doorbell*> also_ring_{nullptr};
  comm::ordered_release held_;  // deliveries the host keeps (host_hold)
  bool hold_current_ = false;
  std::vector<byte_span> scratch_pieces_;
  std::vector<std::byte> scratch_headers_;
};

}  // namespace iso::nicfw
