// The NIC's sending side of the transport: packets go straight out when the path is free;
// otherwise they wait, in order, in a per-destination backlog that is flushed on every
// poll. Nothing is dropped, and packets to one destination never overtake each other.
// Packets for this node itself (an SIU's tokens to the TM it hosts, and the answers) skip
// the transport: they wait in a loopback queue that the engine handles in the same round.
#pragma once

#include <deque>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "comm/transport.hpp"

namespace iso::nicfw {

class outbound {
 public:
  explicit outbound(comm::transport& transport);

  // Takes the oldest packet this node sent itself. Precondition: has_loopback().
  [[nodiscard]] bool has_loopback() const { return !loopback_.empty(); }
  [[nodiscard]] std::vector<std::byte> take_loopback() {
    std::vector<std::byte> packet = std::move(loopback_.front());
    loopback_.pop_front();
    return packet;
  }

  // Sends (or queues) the packet made of `pieces`; the bytes are copied if queued.
  // Errors other than back-pressure (an unknown node, an oversize packet) are returned.
  [[nodiscard]] absl::Status send(comm::node_id destination, std::span<const comm::byte_span> pieces);

  // Retries queued packets; returns how many left the backlog.
  [[nodiscard]] absl::Status flush(std::size_t& sent);

  [[nodiscard]] bool has_backlog() const { return queued_ != 0; }
  [[nodiscard]] std::size_t backlog_packets() const { return queued_; }

 private:
  comm::transport& transport_;
  std::vector<std::deque<std::vector<std::byte>>> backlog_;  // per destination
  std::size_t queued_ = 0;
  std::deque<std::vector<std::byte>> loopback_;
};

}  // namespace iso::nicfw
