// How an ordered group's small messages travel together: a batch is the messages back to
// back, each as [u32 length][bytes]. Both orders send batches, and a batch is one ordered
// message underneath, so batching never reorders.
//
//   std::vector<std::byte> batch;
//   append_framed(batch, first);
//   append_framed(batch, second);
//   ISO_RETURN_IF_ERROR(unpack_batch(sender, batch, inbox));  // two deliveries, in order
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "comm/transport.hpp"

namespace iso::runtime {

// One message as a member received it.
struct ordered_delivery {
  comm::node_id sender = 0;
  std::vector<std::byte> bytes;
};

// What framing adds to each message.
inline constexpr std::size_t kFrameBytes = sizeof(std::uint32_t);

// Appends `bytes` (at most 2^32-1 of them) to `batch`, framed.
void append_framed(std::vector<std::byte>& batch, std::span<const std::byte> bytes);

// Appends the messages of `batch` from `sender` to `inbox`, in order. InvalidArgument
// (naming the sender, the group and the byte where it breaks) for a malformed batch; the
// messages before that byte are filed.
[[nodiscard]] absl::Status unpack_batch(comm::node_id sender, std::uint32_t group,
                                        std::span<const std::byte> batch,
                                        std::deque<ordered_delivery>& inbox);

}  // namespace iso::runtime
