// What the two fabrics of one host share: a segment (comm/shm_segment.hpp) that holds the
// bootstrap's board, barriers and failure marks (runtime/bootstrap/segment_bootstrap.hpp)
// and every node's memory window. They differ only in the transport.
#pragma once

#include <memory>
#include <string>

#include "comm/shm_segment.hpp"
#include "runtime/fabric/fabric.hpp"

namespace iso::runtime {

class segment_fabric : public fabric {
 public:
  [[nodiscard]] std::uint32_t nodes() const final { return segment_->nodes(); }
  [[nodiscard]] std::uint32_t local_nodes() const final { return segment_->nodes(); }
  [[nodiscard]] std::unique_ptr<bootstrap> open_bootstrap(std::uint32_t rank,
                                                          absl::Duration stopped_limit) final;
  [[nodiscard]] std::vector<std::span<std::byte>> windows() const final;
  void mark_failed(std::uint32_t rank) final { segment_->mark_failed(rank); }
  [[nodiscard]] absl::Status job_status() const final { return segment_->job_status(); }

 protected:
  segment_fabric(std::shared_ptr<comm::shm_segment> segment, std::string secret)
      : segment_(std::move(segment)), secret_(std::move(secret)) {}
  [[nodiscard]] const std::shared_ptr<comm::shm_segment>& segment() const { return segment_; }

 private:
  std::shared_ptr<comm::shm_segment> segment_;
  std::string secret_;
};

}  // namespace iso::runtime
