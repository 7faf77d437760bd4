#include "runtime/ordered/batch_framing.hpp"

#include <cstring>

#include "absl/strings/str_format.h"

namespace iso::runtime {

void append_framed(std::vector<std::byte>& batch, std::span<const std::byte> bytes) {
  const auto length = static_cast<std::uint32_t>(bytes.size());
  const std::size_t at = batch.size();
  batch.resize(at + kFrameBytes + bytes.size());
  std::memcpy(batch.data() + at, &length, kFrameBytes);
  if (!bytes.empty()) std::memcpy(batch.data() + at + kFrameBytes, bytes.data(), bytes.size());
}

absl::Status unpack_batch(comm::node_id sender, std::uint32_t group,
                          std::span<const std::byte> batch, std::deque<ordered_delivery>& inbox) {
  std::size_t at = 0;
  while (at < batch.size()) {
    std::uint32_t length = 0;
    if (batch.size() - at < kFrameBytes) break;
    std::memcpy(&length, batch.data() + at, kFrameBytes);
    if (batch.size() - at - kFrameBytes < length) break;
    const std::byte* begin = batch.data() + at + kFrameBytes;
    inbox.push_back({.sender = sender, .bytes = {begin, begin + length}});
    at += kFrameBytes + length;
  }
  if (at == batch.size()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrFormat("ordered batch of %u bytes from node %u for group %u is malformed at byte %u",
                      batch.size(), sender, group, at));
}

}  // namespace iso::runtime
