// The bootstrap of a job whose nodes share a comm::shm_segment: processes started by isorun
// (shm) or threads of one process (inproc). Boards and the barrier live in the segment.
#pragma once

#include <memory>
#include <string>

#include "comm/shm_segment.hpp"
#include "runtime/bootstrap/bootstrap.hpp"
#include "runtime/bootstrap/key_value_board.hpp"

namespace iso::runtime {

class segment_bootstrap final : public bootstrap {
 public:
  segment_bootstrap(std::shared_ptr<comm::shm_segment> segment, std::uint32_t rank,
                    std::string secret);

  [[nodiscard]] std::uint32_t rank() const override { return rank_; }
  [[nodiscard]] std::uint32_t size() const override { return segment_->nodes(); }
  [[nodiscard]] const std::string& job_secret() const override { return secret_; }
  [[nodiscard]] absl::Status put(std::string_view key, std::string_view value) override;
  [[nodiscard]] absl::Status fence(absl::Duration timeout) override;
  [[nodiscard]] absl::StatusOr<std::string> get(std::uint32_t node,
                                                std::string_view key) const override;
  [[nodiscard]] absl::Status barrier(absl::Duration timeout) override;
  [[nodiscard]] std::uint64_t barrier_arrive() override { return segment_->barrier_arrive(); }
  [[nodiscard]] absl::StatusOr<bool> barrier_passed(std::uint64_t ticket) const override {
    return segment_->barrier_passed(static_cast<std::uint32_t>(ticket));
  }
  void publish_mark(std::uint64_t value) override { segment_->publish_mark(rank_, value); }
  [[nodiscard]] std::uint64_t max_mark() const override { return segment_->max_mark(); }
  void abort_job() override;
  [[nodiscard]] absl::Status job_status() const override { return segment_->job_status(); }

  [[nodiscard]] const std::shared_ptr<comm::shm_segment>& segment() const { return segment_; }

 private:
  std::shared_ptr<comm::shm_segment> segment_;
  std::uint32_t rank_;
  std::string secret_;
  key_value_board own_board_;
};

}  // namespace iso::runtime
