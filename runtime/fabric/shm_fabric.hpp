// The fabric of processes on one host: a shared segment (comm/shm_segment.hpp) holds the
// rings of the shm transport, every node's memory window, and the bootstrap's board,
// barriers and failure marks (runtime/bootstrap/segment_bootstrap.hpp).
#pragma once

#include <memory>
#include <string>

#include "comm/shm_segment.hpp"
#include "runtime/fabric/fabric.hpp"

namespace iso::runtime {

class shm_fabric final : public fabric {
 public:
  shm_fabric(std::shared_ptr<comm::shm_segment> segment, std::string secret)
      : segment_(std::move(segment)), secret_(std::move(secret)) {}

  [[nodiscard]] std::uint32_t nodes() const override { return segment_->nodes(); }
  [[nodiscard]] std::uint32_t local_nodes() const override { return segment_->nodes(); }
  [[nodiscard]] absl::StatusOr<std::unique_ptr<comm::transport>> open_transport(
      std::uint32_t rank) override;
  [[nodiscard]] std::unique_ptr<bootstrap> open_bootstrap(std::uint32_t rank,
                                                          absl::Duration stopped_limit) override;
  [[nodiscard]] std::vector<std::span<std::byte>> windows() const override;
  void mark_failed(std::uint32_t rank) override { segment_->mark_failed(rank); }
  [[nodiscard]] absl::Status job_status() const override { return segment_->job_status(); }

 private:
  std::shared_ptr<comm::shm_segment> segment_;
  std::string secret_;
};

}  // namespace iso::runtime
