// Credit-based flow control between nodes, for the two classes of packet that fill a
// receiver's buffers: isotach data (isochron parts) and direct host packets (plain
// messages). Read replies and paranoid echoes are exempt: each answers a request its
// receiver made, so their number is bounded by the requests outstanding.
//
// Credits are bytes (payload + kPacketOverhead per packet), cumulative and monotone (no
// wrap, no "null credit" value). Each node may have `window` bytes of one class in flight
// to each peer: sent, but not yet freed by the peer's host (freed = consumed: executed, or
// received by the application). A packet larger than the window may go when nothing of its
// class is in flight. So a receiver never buffers more than max(window, largest message)
// per sender per class, whatever the traffic.
//
// Sides: the host gates what it submits (host_may_send / host_consume) and reports what it
// frees (host_free); the NIC carries freed counts to the peer, piggy-backed on every data
// packet and, when a quarter of the window is unreported or the peer asked, in an explicit
// credit packet; and the NIC asks a peer for credits (credit request) when the host waits.
// Fields written by one side and read by the other are atomics; the rest is single-sided.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>

#include "comm/transport.hpp"

namespace iso::nicfw {

enum class credit_class : std::uint8_t { isotach = 0, direct = 1 };
inline constexpr int kCreditClasses = 2;
// What a packet costs beyond its payload, so that empty messages are bounded too.
inline constexpr std::uint64_t kPacketOverhead = 64;

// Freed counts as they travel (piggy-backed after a data packet's header, or alone).
struct credit_info {
  std::array<std::uint64_t, kCreditClasses> freed{};
};
static_assert(sizeof(credit_info) == 16);

class credit_ledger {
 public:
  credit_ledger(std::uint32_t nodes, comm::node_id self, std::uint64_t window);

  [[nodiscard]] std::uint64_t window() const { return window_; }
  [[nodiscard]] std::uint32_t nodes() const { return nodes_; }

  // Host, sending. `bytes` is the payload; the overhead is added here.
  [[nodiscard]] bool host_may_send(comm::node_id to, credit_class c, std::size_t bytes) const;
  void host_consume(comm::node_id to, credit_class c, std::size_t bytes);
  // Asks the NIC to request credits from `to` (the host waits for them).
  void host_want(comm::node_id to, credit_class c, std::size_t bytes);
  // Bytes of class `c` this node has in flight to `to` (sent, not yet freed there).
  [[nodiscard]] std::uint64_t in_flight(comm::node_id to, credit_class c) const;

  // Host, receiving: a packet of `bytes` payload arrived (for the buffer bound; the packet
  // overhead is added here) / `bytes` of its buffer were freed. Frees are raw: what a
  // packet frees in all, possibly in several steps, is its payload plus kPacketOverhead.
  void host_received(comm::node_id from, credit_class c, std::size_t bytes);
  void host_free(comm::node_id from, credit_class c, std::size_t bytes);
  // Bytes from `from` this host holds and has not freed; and the most it ever held.
  [[nodiscard]] std::uint64_t buffered(comm::node_id from, credit_class c) const;
  [[nodiscard]] std::uint64_t peak_buffered(comm::node_id from, credit_class c) const;

  // NIC: a peer's freed counts arrived.
  void nic_grant(comm::node_id from, const credit_info& info);
  // NIC: what to tell `to` now (piggy-backed on a packet to it); marks it reported.
  [[nodiscard]] credit_info nic_report(comm::node_id to);
  // NIC: `from` waits for credits; answer as soon as anything is freed.
  void nic_on_request(comm::node_id from) {
    peers_[from].request_pending = true;
    dirty_.store(true, std::memory_order_relaxed);
  }
  // NIC: whether an explicit credit packet to `to` is due.
  [[nodiscard]] bool nic_credit_due(comm::node_id to) const;
  // NIC: whether a credit request to `to` is due (and records it as sent).
  [[nodiscard]] bool nic_take_request_due(comm::node_id to);
  // NIC: something changed on the host side since the last call (cheap check per round).
  // Reads first: an exchange is a locked instruction (a full barrier on x86), and most
  // rounds find nothing changed.
  [[nodiscard]] bool nic_take_dirty() {
    if (!dirty_.load(std::memory_order_relaxed)) return false;
    return dirty_.exchange(false, std::memory_order_acquire);
  }

 private:
  struct alignas(64) peer {
    // Written by the NIC, read by the host.
    std::array<std::atomic<std::uint64_t>, kCreditClasses> granted{};
    // Written by the host, read by the NIC.
    std::array<std::atomic<std::uint64_t>, kCreditClasses> freed{};
    std::array<std::atomic<std::uint64_t>, kCreditClasses> wanted{};  // granted it waits for
    // Host only.
    std::array<std::uint64_t, kCreditClasses> used{};
    std::array<std::uint64_t, kCreditClasses> received{};
    std::array<std::uint64_t, kCreditClasses> peak{};
    // NIC only.
    std::array<std::uint64_t, kCreditClasses> reported{};
    bool request_pending = false;  // the peer asked us for credits
    bool requested = false;        // we asked the peer and have had no answer yet
  };

  std::uint32_t nodes_;
  comm::node_id self_;
  std::uint64_t window_;
  std::unique_ptr<peer[]> peers_;
  std::atomic<bool> dirty_{false};
};

}  // namespace iso::nicfw
