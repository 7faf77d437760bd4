#include "runtime/bootstrap/segment_bootstrap.hpp"

#include "absl/strings/str_format.h"

namespace iso::runtime {

segment_bootstrap::segment_bootstrap(std::shared_ptr<comm::shm_segment> segment,
                                     std::uint32_t rank, std::string secret)
    : segment_(std::move(segment)),
      rank_(rank),
      secret_(std::move(secret)),
      own_board_(segment_->board(rank)) {}

absl::Status segment_bootstrap::put(std::string_view key, std::string_view value) {
  return own_board_.put(key, value);
}

absl::Status segment_bootstrap::fence(absl::Duration timeout) { return barrier(timeout); }

absl::StatusOr<std::string> segment_bootstrap::get(std::uint32_t node,
                                                   std::string_view key) const {
  if (node >= size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("bootstrap get from node %u: the job has %u nodes", node, size()));
  }
  absl::StatusOr<std::string> value = key_value_board::find(segment_->board(node), key);
  if (absl::IsNotFound(value.status())) {
    return absl::NotFoundError(
        absl::StrFormat("node %u published no bootstrap key '%s'", node, key));
  }
  return value;
}

absl::Status segment_bootstrap::barrier(absl::Duration timeout) {
  return segment_->barrier(timeout);
}

void segment_bootstrap::abort_job() { segment_->mark_failed(rank_); }

}  // namespace iso::runtime
