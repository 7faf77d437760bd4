#include "nicfw/credit_ledger.hpp"

#include <algorithm>

#include "base/log.hpp"

namespace iso::nicfw {
namespace {
constexpr std::size_t index(credit_class c) { return static_cast<std::size_t>(c); }
}  // namespace

credit_ledger::credit_ledger(std::uint32_t nodes, comm::node_id self, std::uint64_t window)
    : nodes_(nodes), self_(self), window_(window), peers_(new peer[nodes]) {}

bool credit_ledger::host_may_send(comm::node_id to, credit_class c, std::size_t bytes) const {
  const std::uint64_t flying = in_flight(to, c);
  return flying == 0 || flying + bytes + kPacketOverhead <= window_;
}

void credit_ledger::host_consume(comm::node_id to, credit_class c, std::size_t bytes) {
  peers_[to].used[index(c)] += bytes + kPacketOverhead;
}

void credit_ledger::host_want(comm::node_id to, credit_class c, std::size_t bytes) {
  peer& p = peers_[to];
  // The granted count that lets the packet go: all of it back for an oversize packet.
  const std::uint64_t need = bytes + kPacketOverhead;
  const std::uint64_t used = p.used[index(c)];
  const std::uint64_t target = need > window_ ? used : used + need - window_;
  if (p.wanted[index(c)].load(std::memory_order_relaxed) >= target) return;
  ISO_LOG(nicfw.credit, debug,
          "node %u waits for credit to send %u bytes of class %u to node %u (%u in flight, "
          "window %u)",
          self_, need, index(c), to, used - p.granted[index(c)].load(std::memory_order_relaxed),
          window_);
  p.wanted[index(c)].store(target, std::memory_order_relaxed);
  dirty_.store(true, std::memory_order_release);
}

std::uint64_t credit_ledger::in_flight(comm::node_id to, credit_class c) const {
  const peer& p = peers_[to];
  return p.used[index(c)] - p.granted[index(c)].load(std::memory_order_acquire);
}

void credit_ledger::host_received(comm::node_id from, credit_class c, std::size_t bytes) {
  peer& p = peers_[from];
  p.received[index(c)] += bytes + kPacketOverhead;
  p.peak[index(c)] = std::max(p.peak[index(c)], buffered(from, c));
}

void credit_ledger::host_free(comm::node_id from, credit_class c, std::size_t bytes) {
  peer& p = peers_[from];
  // The host is the only writer: a load and a store, not a locked add (a full barrier on
  // x86, paid per executed remote part).
  std::atomic<std::uint64_t>& freed = p.freed[index(c)];
  freed.store(freed.load(std::memory_order_relaxed) + bytes, std::memory_order_relaxed);
  dirty_.store(true, std::memory_order_release);
}

std::uint64_t credit_ledger::buffered(comm::node_id from, credit_class c) const {
  const peer& p = peers_[from];
  return p.received[index(c)] - p.freed[index(c)].load(std::memory_order_relaxed);
}

std::uint64_t credit_ledger::peak_buffered(comm::node_id from, credit_class c) const {
  return peers_[from].peak[index(c)];
}

void credit_ledger::nic_grant(comm::node_id from, const credit_info& info) {
  peer& p = peers_[from];
  bool still_wanting = false;
  for (std::size_t c = 0; c < kCreditClasses; ++c) {
    std::uint64_t granted = p.granted[c].load(std::memory_order_relaxed);
    if (info.freed[c] > granted) {
      ISO_LOG(nicfw.credit, debug, "node %u gets %u bytes of class %u credit back from node %u",
              self_, info.freed[c] - granted, c, from);
      granted = info.freed[c];
      p.granted[c].store(granted, std::memory_order_release);
    }
    still_wanting |= p.wanted[c].load(std::memory_order_relaxed) > granted;
  }
  p.requested = false;
  // Only a host still waiting needs another request; anything else would make every
  // data packet send the NIC through all its peers.
  if (still_wanting) dirty_.store(true, std::memory_order_relaxed);
}

credit_info credit_ledger::nic_report(comm::node_id to) {
  peer& p = peers_[to];
  credit_info info;
  for (std::size_t c = 0; c < kCreditClasses; ++c) {
    info.freed[c] = p.freed[c].load(std::memory_order_relaxed);
    p.reported[c] = info.freed[c];
  }
  p.request_pending = false;
  return info;
}

bool credit_ledger::nic_credit_due(comm::node_id to) const {
  const peer& p = peers_[to];
  for (std::size_t c = 0; c < kCreditClasses; ++c) {
    const std::uint64_t unreported = p.freed[c].load(std::memory_order_relaxed) - p.reported[c];
    if (unreported == 0) continue;
    if (p.request_pending || unreported >= window_ / 4) return true;
  }
  return false;
}

bool credit_ledger::nic_take_request_due(comm::node_id to) {
  peer& p = peers_[to];
  if (p.requested) return false;
  for (std::size_t c = 0; c < kCreditClasses; ++c) {
    if (p.wanted[c].load(std::memory_order_relaxed) >
        p.granted[c].load(std::memory_order_relaxed)) {
      p.requested = true;
      return true;
    }
  }
  return false;
}

}  // namespace iso::nicfw
