// The NIC's sending side of the transport: packets go straight out when the path is free;
// otherwise they wait, in order, in a per-destination backlog that is flushed on every
// poll. Nothing is dropped, and packets to one destination never overtake each other.
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
};

}  // namespace iso::nicfw
