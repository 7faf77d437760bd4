// The bootstrap of a job started by a PMIx launcher (mpirun, srun --mpi=pmix): every call
// of the interface goes through the process's pmix_session. A barrier is a PMIx fence that
// also collects what each node arrived with (its digest and mark), so barrier_arrive()
// starts a non-blocking fence and barrier_passed() asks whether it completed. Barriers use
// two keys by turns, so that the data each fence carries stays the same size however many
// barriers a job makes. A failed
// node is learnt from the launcher's events (a process aborted or ended); abort_job()
// marks this node failed here only, and the others learn of it when its process ends.
//
// What PMIx does not tell: which nodes have arrived at a fence that has not completed, so
// barrier_arrived() knows only this node's arrival. A stopped process is the launcher's to
// notice, so there is no stopped limit here.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/bootstrap/bootstrap.hpp"
#include "runtime/bootstrap/pmix_session.hpp"

namespace iso::runtime {

class pmix_bootstrap final : public bootstrap {
 public:
  explicit pmix_bootstrap(std::shared_ptr<pmix_session> session);

  [[nodiscard]] std::uint32_t rank() const override { return session_->rank(); }
  [[nodiscard]] std::uint32_t size() const override { return session_->size(); }
  [[nodiscard]] const std::string& job_secret() const override { return session_->secret(); }
  [[nodiscard]] absl::Status put(std::string_view key, std::string_view value) override;
  [[nodiscard]] absl::Status fence(absl::Duration timeout) override;
  [[nodiscard]] absl::StatusOr<std::string> get(std::uint32_t node,
                                                std::string_view key) const override;
  [[nodiscard]] absl::Status barrier(absl::Duration timeout) override;
  [[nodiscard]] std::uint64_t barrier_arrive(std::uint64_t digest) override;
  [[nodiscard]] absl::StatusOr<bool> barrier_passed(std::uint64_t ticket) const override;
  [[nodiscard]] std::uint64_t barrier_digest(std::uint32_t node,
                                             std::uint64_t ticket) const override;
  [[nodiscard]] bool barrier_arrived(std::uint32_t node, std::uint64_t ticket) const override;
  void publish_mark(std::uint64_t value) override { mark_ = value; }
  [[nodiscard]] std::uint64_t max_mark() const override { return max_mark_; }
  void abort_job() override { session_->note_failed(rank()); }
  void leave() override { session_->leave(); }
  [[nodiscard]] absl::Status job_status() const override { return session_->job_status(); }

 private:
  // What a node arrived at a barrier with, as collected by the barrier's fence.
  struct arrival {
    std::uint64_t digest = 0;
    std::uint64_t mark = 0;
  };
  [[nodiscard]] absl::StatusOr<arrival> arrival_of(std::uint32_t node, std::uint64_t ticket) const;

  std::shared_ptr<pmix_session> session_;
  std::uint64_t mark_ = 0;
  std::uint64_t last_ticket_ = 0;
  std::uint64_t fence_of_last_ticket_ = 0;
  absl::Status arrive_error_;
  // Filled once the last barrier passed (barrier_passed is const: what it learns is cached).
  mutable std::uint64_t max_mark_ = 0;
  mutable std::vector<arrival> arrivals_;
  mutable std::uint64_t arrivals_ticket_ = 0;
};

}  // namespace iso::runtime
