// The `inproc` backend: every node of the job is a thread of this process. For tests,
// teaching and simulating more nodes than there are cores.
//
//   auto endpoints = iso::comm::make_inproc_fabric(4, {});
//   // give endpoints[i] to the thread that plays node i
#pragma once

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "comm/ring_transport.hpp"

namespace iso::comm {

struct inproc_options {
  std::size_t ring_capacity = 64 * 1024;  // bytes of record space per ordered pair
  bool shuffle_poll_order = false;
};

// One transport per node; they share memory that lives until the last one is destroyed.
// InvalidArgument when `nodes` is 0 or the ring capacity is not a power of two >= 256.
absl::StatusOr<std::vector<std::unique_ptr<transport>>> make_inproc_fabric(
    std::uint32_t nodes, const inproc_options& options);

// Checks a ring capacity from configuration: a power of two between 256 B and 1 GiB.
absl::Status validate_ring_capacity(std::size_t capacity);

}  // namespace iso::comm
