// The NIC's sending side of the transport: packets go straight out when the path is free;
// otherwise they wait, in order, in a per-destination backlog that is flushed on every
// poll. Nothing is dropped, and packets to one destination never overtake each other.
// Packets for this node itself (between TMs of adjacent switches hosted on one node) skip
// the transport: they wait in a loopback queue that the engine handles in the same round.
//
// Every packet's header (the first piece, a packet_header) gets its sequence number for
// the destination here, and in paranoid mode the checksum of the rest; packets sent are
// counted per destination and type.
#pragma once

#include <array>
#include <atomic>
#include <deque>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "comm/transport.hpp"
#include "nicfw/wire.hpp"

namespace iso::nicfw {

// Packets per peer and type, written by the NIC, readable from any thread.
class packet_counts {
 public:
  explicit packet_counts(std::uint32_t nodes) : counts_(new row[nodes]) {}
  void add(comm::node_id peer, packet_type t) {
    auto& c = counts_[peer][static_cast<std::size_t>(t) % kPacketTypes];
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  [[nodiscard]] std::uint64_t get(comm::node_id peer, packet_type t) const {
    return counts_[peer][static_cast<std::size_t>(t) % kPacketTypes].load(
        std::memory_order_relaxed);
  }

 private:
  using row = std::array<std::atomic<std::uint64_t>, kPacketTypes>;
  std::unique_ptr<row[]> counts_;
};

// CRC-32 of `pieces` in order (zlib's).
std::uint32_t checksum(std::span<const comm::byte_span> pieces);

class outbound {
 public:
  outbound(comm::transport& transport, bool paranoid);

  // Moves the oldest packet this node sent itself into `into`, whose old buffer is kept for
  // a later loopback packet (tokens between co-hosted TMs flow on every pulse; reusing their
  // buffers keeps the allocator off that path). Precondition: has_loopback().
  [[nodiscard]] bool has_loopback() const { return !loopback_.empty(); }
  void take_loopback(std::vector<std::byte>& into) {
    into.swap(loopback_.front());
    spare_buffers_.push_back(std::move(loopback_.front()));
    loopback_.pop_front();
  }

  // Sends (or queues) the packet made of `pieces`, the first of which starts with its
  // packet_header; the bytes are copied if queued. Errors other than back-pressure (an
  // unknown node, an oversize packet) are returned.
  [[nodiscard]] absl::Status send(comm::node_id destination,
                                  std::span<const comm::byte_span> pieces);

  // Retries queued packets; returns how many left the backlog.
  [[nodiscard]] absl::Status flush(std::size_t& sent);

  [[nodiscard]] bool has_backlog() const { return queued_ != 0; }
  [[nodiscard]] std::size_t backlog_packets() const { return queued_; }
  // Packets waiting for the path to `destination` (any thread; approximate while it moves).
  [[nodiscard]] std::size_t backlog_to(comm::node_id destination) const {
    return backlog_sizes_[destination].load(std::memory_order_relaxed);
  }
  [[nodiscard]] const packet_counts& sent() const { return sent_; }

 private:
  void queue(comm::node_id destination, std::vector<std::byte> packet);

  comm::transport& transport_;
  bool paranoid_;
  std::vector<std::deque<std::vector<std::byte>>> backlog_;  // per destination
  std::unique_ptr<std::atomic<std::size_t>[]> backlog_sizes_;
  std::vector<std::uint32_t> next_sequence_;  // per destination
  std::size_t queued_ = 0;
  std::deque<std::vector<std::byte>> loopback_;
  std::vector<std::vector<std::byte>> spare_buffers_;
  packet_counts sent_;
  std::vector<comm::byte_span> scratch_;
};

}  // namespace iso::nicfw
