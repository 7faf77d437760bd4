// The fabric of nodes that are threads of one process: the in-process transport
// (comm/inproc.hpp) between them, and a private segment, mapped by this process only,
// for what the bootstrap and same-host reads need (board, barriers, failure marks,
// windows). Its rings are left at the smallest size: no packet travels through them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "runtime/fabric/segment_fabric.hpp"

namespace iso::runtime {

struct inproc_fabric_options {
  std::size_t ring_capacity = 256 * 1024;  // of the transport, per ordered pair
  bool shuffle_poll_order = false;
  std::size_t window_bytes = 0;  // of each node's memory window (0: none)
};

class inproc_fabric final : public segment_fabric {
 public:
  // InvalidArgument for a bad ring capacity or no nodes; ResourceExhausted without memory.
  static absl::StatusOr<std::shared_ptr<inproc_fabric>> create(
      std::uint32_t nodes, const std::string& secret, const inproc_fabric_options& options);

  // FailedPrecondition when `rank`'s port was taken already.
  [[nodiscard]] absl::StatusOr<std::unique_ptr<comm::transport>> open_transport(
      std::uint32_t rank) override;
  [[nodiscard]] fabric_description describe() const override {
    return {.fabric = "inproc", .transport = "in-process queues", .lanes = "memory"};
  }

 private:
  inproc_fabric(std::shared_ptr<comm::shm_segment> segment, std::string secret,
                std::vector<std::unique_ptr<comm::transport>> ports)
      : segment_fabric(std::move(segment), std::move(secret)), ports_(std::move(ports)) {}

  absl::Mutex mu_;
  std::vector<std::unique_ptr<comm::transport>> ports_ ABSL_GUARDED_BY(mu_);  // by rank
};

}  // namespace iso::runtime
