#include "nicfw/outbound.hpp"

#include <zlib.h>

#include <cstring>

#include "base/check.hpp"

namespace iso::nicfw {

std::uint32_t checksum(std::span<const comm::byte_span> pieces) {
  uLong crc = crc32(0L, Z_NULL, 0);
  for (const comm::byte_span& piece : pieces) {
    // zlib restarts on a null buffer, which an empty span may have.
    if (piece.empty()) continue;
    // zlib takes lengths as uInt; pieces are at most a transport packet, far below 4 GiB.
    crc = crc32(crc, reinterpret_cast<const Bytef*>(piece.data()), static_cast<uInt>(piece.size()));
  }
  return static_cast<std::uint32_t>(crc);
}

outbound::outbound(comm::transport& transport, bool paranoid)
    : transport_(transport),
      paranoid_(paranoid),
      backlog_(transport.size()),
      backlog_sizes_(new std::atomic<std::size_t>[transport.size()]()),
      next_sequence_(transport.size(), 0),
      sent_(transport.size()) {}

void outbound::queue(comm::node_id destination, std::vector<std::byte> packet) {
  backlog_[destination].push_back(std::move(packet));
  backlog_sizes_[destination].store(backlog_[destination].size(), std::memory_order_relaxed);
  ++queued_;
}

absl::Status outbound::send(comm::node_id destination, std::span<const comm::byte_span> pieces) {
  if (destination >= backlog_.size()) return transport_.send(destination, pieces);  // the error
  ISO_CHECK(!pieces.empty() && pieces[0].size() >= sizeof(packet_header))
      << "a packet starts with its header";
  packet_header header;
  std::memcpy(&header, pieces[0].data(), sizeof(header));
  // The header is replaced by a stamped copy; what follows it in the first piece stays.
  scratch_.clear();
  scratch_.push_back(std::as_bytes(std::span(&header, 1)));
  if (pieces[0].size() > sizeof(header)) scratch_.push_back(pieces[0].subspan(sizeof(header)));
  scratch_.insert(scratch_.end(), pieces.begin() + 1, pieces.end());
  header.sequence = next_sequence_[destination]++;
  header.checksum = paranoid_ ? checksum(std::span(scratch_).subspan(1)) : 0;
  sent_.add(destination, header.type);

  if (destination == transport_.self()) {
    std::vector<std::byte>& copy = loopback_.emplace_back();
    if (!spare_buffers_.empty()) {
      copy.swap(spare_buffers_.back());
      spare_buffers_.pop_back();
      copy.clear();
    }
    for (const comm::byte_span& piece : scratch_)
      copy.insert(copy.end(), piece.begin(), piece.end());
    return absl::OkStatus();
  }
  if (backlog_[destination].empty()) {
    absl::Status s = transport_.send(destination, scratch_);
    if (s.ok() || !absl::IsUnavailable(s)) return s;  // ok() first: it is inline
  }
  std::vector<std::byte> copy;
  for (const comm::byte_span& piece : scratch_) copy.insert(copy.end(), piece.begin(), piece.end());
  if (copy.size() > transport_.max_packet_size()) return transport_.send(destination, scratch_);
  queue(destination, std::move(copy));
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
    backlog_sizes_[d].store(queue.size(), std::memory_order_relaxed);
  }
  return absl::OkStatus();
}

}  // namespace iso::nicfw
