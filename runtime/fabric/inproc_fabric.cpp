#include "runtime/fabric/inproc_fabric.hpp"

#include "absl/strings/str_format.h"
#include "comm/inproc.hpp"

namespace iso::runtime {

absl::StatusOr<std::shared_ptr<inproc_fabric>> inproc_fabric::create(
    std::uint32_t nodes, const std::string& secret, const inproc_fabric_options& options) {
  absl::StatusOr<std::vector<std::unique_ptr<comm::transport>>> ports = comm::make_inproc_fabric(
      nodes,
      {.ring_capacity = options.ring_capacity, .shuffle_poll_order = options.shuffle_poll_order});
  if (!ports.ok()) return ports.status();
  constexpr std::size_t kUnusedRing = 256;  // the smallest a segment takes
  absl::StatusOr<std::shared_ptr<comm::shm_segment>> segment = comm::shm_segment::create_private(
      nodes, secret, {.ring_capacity = kUnusedRing, .window_bytes = options.window_bytes});
  if (!segment.ok()) return segment.status();
  return std::shared_ptr<inproc_fabric>(
      new inproc_fabric(*std::move(segment), secret, *std::move(ports)));
}

absl::StatusOr<std::unique_ptr<comm::transport>> inproc_fabric::open_transport(std::uint32_t rank) {
  absl::MutexLock lock(&mu_);
  if (rank >= ports_.size() || ports_[rank] == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrFormat("the in-process port of node %u is taken or does not exist", rank));
  }
  return std::move(ports_[rank]);
}

}  // namespace iso::runtime
