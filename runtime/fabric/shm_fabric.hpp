// The fabric of processes on one host: a shared segment that isorun created holds the
// rings of the shm transport besides the bootstrap's state and the windows
// (segment_fabric.hpp).
#pragma once

#include <memory>
#include <string>

#include "runtime/fabric/segment_fabric.hpp"

namespace iso::runtime {

class shm_fabric final : public segment_fabric {
 public:
  shm_fabric(std::shared_ptr<comm::shm_segment> segment, std::string secret)
      : segment_fabric(std::move(segment), std::move(secret)) {}

  [[nodiscard]] absl::StatusOr<std::unique_ptr<comm::transport>> open_transport(
      std::uint32_t rank) override;
  [[nodiscard]] fabric_description describe() const override {
    return {.fabric = "shm", .transport = "shm rings", .lanes = "shared memory"};
  }
};

}  // namespace iso::runtime
