#include "nicfw/outbound.hpp"

namespace iso::nicfw {

outbound::outbound(comm::transport& transport)
    : transport_(transport), backlog_(transport.size()) {}

absl::Status outbound::send(comm::node_id destination, std::span<const comm::byte_span> pieces) {
  if (destination == transport_.self()) {
    std::vector<std::byte>& copy = loopback_.emplace_back();
    for (const comm::byte_span& piece : pieces) copy.insert(copy.end(), piece.begin(), piece.end());
    return absl::OkStatus();
  }
  if (destination < backlog_.size() && backlog_[destination].empty()) {
    absl::Status s = transport_.send(destination, pieces);
    if (!absl::IsUnavailable(s)) return s;
  } else if (destination >= backlog_.size()) {
    return transport_.send(destination, pieces);  // reports the bad node id
  }
  std::vector<std::byte> copy;
  for (const comm::byte_span& piece : pieces) copy.insert(copy.end(), piece.begin(), piece.end());
  if (copy.size() > transport_.max_packet_size()) return transport_.send(destination, pieces);
  backlog_[destination].push_back(std::move(copy));
  ++queued_;
  return absl::OkStatus();
}

absl::Status outbound::flush(std::size_t& sent) {
  sent = 0;
  if (queued_ == 0) return absl::OkStatus();
  for (comm::node_id d = 0; d < backlog_.size(); ++d) {
    auto& queue = backlog_[d];
    while (!queue.empty()) {
      absl::Status s = transport_.send(d, comm::byte_span(queue.front()));
      if (absl::IsUnavailable(s)) break;
      if (!s.ok()) return s;
      queue.pop_front();
      --queued_;
      ++sent;
    }
  }
  return absl::OkStatus();
}

}  // namespace iso::nicfw
