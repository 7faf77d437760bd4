// The bootstrap of a job whose nodes share a comm::shm_segment: processes started by isorun
// (shm) or threads of one process (inproc). Boards and the barrier live in the segment.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "comm/shm_segment.hpp"
#include "runtime/bootstrap/bootstrap.hpp"
#include "runtime/bootstrap/key_value_board.hpp"
#include "runtime/bootstrap/process_probe.hpp"

namespace iso::runtime {

class segment_bootstrap final : public bootstrap {
 public:
  // `stopped_limit`: how long another node's process may stay stopped before this node
  // takes it for failed.
  segment_bootstrap(std::shared_ptr<comm::shm_segment> segment, std::uint32_t rank,
                    std::string secret, absl::Duration stopped_limit);

  [[nodiscard]] std::uint32_t rank() const override { return rank_; }
  [[nodiscard]] std::uint32_t size() const override { return segment_->nodes(); }
  [[nodiscard]] const std::string& job_secret() const override { return secret_; }
  [[nodiscard]] absl::Status put(std::string_view key, std::string_view value) override;
  [[nodiscard]] absl::Status fence(absl::Duration timeout) override;
  [[nodiscard]] absl::StatusOr<std::string> get(std::uint32_t node,
                                                std::string_view key) const override;
  [[nodiscard]] absl::Status barrier(absl::Duration timeout) override;
  [[nodiscard]] std::uint64_t barrier_arrive(std::uint64_t digest) override {
    return segment_->barrier_arrive(rank_, digest);
  }
  [[nodiscard]] absl::StatusOr<bool> barrier_passed(std::uint64_t ticket) const override {
    return segment_->barrier_passed(static_cast<std::uint32_t>(ticket));
  }
  [[nodiscard]] std::uint64_t barrier_digest(std::uint32_t node,
                                             std::uint64_t ticket) const override {
    return segment_->barrier_digest(node, static_cast<std::uint32_t>(ticket));
  }
  [[nodiscard]] bool barrier_arrived(std::uint32_t node, std::uint64_t ticket) const override {
    return segment_->barrier_arrived(node, static_cast<std::uint32_t>(ticket));
  }
  void publish_mark(std::uint64_t value) override { segment_->publish_mark(rank_, value); }
  [[nodiscard]] std::uint64_t max_mark() const override { return segment_->max_mark(); }
  void abort_job() override;
  void leave() override { segment_->mark_left(rank_); }
  [[nodiscard]] absl::Status job_status() const override;

  [[nodiscard]] const std::shared_ptr<comm::shm_segment>& segment() const { return segment_; }

 private:
  std::shared_ptr<comm::shm_segment> segment_;
  std::uint32_t rank_;
  std::string secret_;
  key_value_board own_board_;
  absl::Duration stopped_limit_;
  std::uint64_t own_pid_namespace_;  // see process_probe.hpp

  // What this node last saw of each other node's process (job_status() looks now and then).
  struct peer_watch {
    std::uint64_t start_time = 0;  // 0: not seen yet
    absl::Time stopped_since = absl::InfiniteFuture();
  };
  // Looks at the other nodes' processes; marks the first one found gone or stopped too long.
  void check_peers() const;
  // Used by the node's own thread only (the one that waits); every node of an inproc job
  // has a bootstrap of its own.
  mutable absl::Time next_check_ = absl::InfinitePast();
  mutable std::vector<peer_watch> peers_;
};

}  // namespace iso::runtime
