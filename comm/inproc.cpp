#include "comm/inproc.hpp"

#include <cstdlib>
#include <cstring>

#include "absl/strings/str_format.h"

namespace iso::comm {

absl::Status validate_ring_capacity(std::size_t capacity) {
  if (capacity < 256 || capacity > (std::size_t{1} << 30) || (capacity & (capacity - 1)) != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ring capacity %u is not a power of two between 256 and 1073741824 bytes", capacity));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::unique_ptr<transport>>> make_inproc_fabric(
    std::uint32_t nodes, const inproc_options& options) {
  if (nodes == 0) return absl::InvalidArgumentError("an inproc fabric needs at least one node");
  if (absl::Status s = validate_ring_capacity(options.ring_capacity); !s.ok()) return s;
  const fabric_layout layout{nodes, options.ring_capacity};
  void* raw = std::aligned_alloc(64, layout.bytes());
  if (raw == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("cannot allocate %u bytes for %u inproc nodes", layout.bytes(), nodes));
  }
  std::memset(raw, 0, layout.bytes());
  std::shared_ptr<void> memory(raw, std::free);
  std::vector<std::unique_ptr<transport>> endpoints;
  for (node_id self = 0; self < nodes; ++self) {
    endpoints.push_back(std::make_unique<ring_transport>(
        self, layout, static_cast<std::byte*>(raw), memory,
        ring_transport_options{.shuffle_poll_order = options.shuffle_poll_order}));
  }
  return endpoints;
}

}  // namespace iso::comm
