#include "runtime/bootstrap/segment_bootstrap.hpp"

#include <unistd.h>

#include "absl/strings/str_format.h"

namespace iso::runtime {

namespace {

// How often a waiting node looks at the other nodes' processes: often enough that a gone
// peer is noticed at once to a person, rarely enough to cost nothing.
constexpr absl::Duration kPeerCheckInterval = absl::Milliseconds(100);

}  // namespace

segment_bootstrap::segment_bootstrap(std::shared_ptr<comm::shm_segment> segment, std::uint32_t rank,
                                     std::string secret, absl::Duration stopped_limit)
    : segment_(std::move(segment)),
      rank_(rank),
      secret_(std::move(secret)),
      own_board_(segment_->board(rank)),
      stopped_limit_(stopped_limit),
      own_pid_namespace_(own_pid_namespace()),
      peers_(segment_->nodes()) {
  segment_->set_process(rank_, static_cast<std::int32_t>(::getpid()), own_pid_namespace_);
}

absl::Status segment_bootstrap::job_status() const {
  if (absl::Status s = segment_->job_status(); !s.ok()) return s;
  check_peers();
  return segment_->job_status();
}

void segment_bootstrap::check_peers() const {
  // A waiting node asks once per idle round past its polling rounds: before each yield, or
  // each sleep when the job is oversubscribed, so a sleep or a yield (a system call) comes
  // with every call and reading the clock each time costs nothing beside it. Counting calls
  // instead would wait 64 sleeps (seconds) to look once.
  const absl::Time now = absl::Now();
  if (now < next_check_) return;
  next_check_ = now + kPeerCheckInterval;
  const pid_t self = ::getpid();
  for (std::uint32_t n = 0; n < segment_->nodes(); ++n) {
    const pid_t pid = segment_->process(n);
    // Nodes of this process (inproc) fail through exceptions, never by vanishing.
    if (n == rank_ || pid <= 0 || pid == self || segment_->left(n)) continue;
    // A pid from another pid namespace (a node in a container) names another process here,
    // or none: looking it up would take a live node for gone, or a gone one for alive.
    // Only the launcher, which reaps it, can tell that it ended (isorun marks it then).
    const std::uint64_t pid_namespace = segment_->process_namespace(n);
    if (pid_namespace == 0 || pid_namespace != own_pid_namespace_) continue;
    const process_sample sample = probe_process(pid);
    peer_watch& watch = peers_[n];
    if (watch.start_time == 0 && sample.state != process_state::gone) {
      watch.start_time = sample.start_time;
    }
    const bool gone = sample.state == process_state::gone || sample.start_time != watch.start_time;
    // It may have left between the look at its flag and the look at its process.
    if (gone && !segment_->left(n)) {
      segment_->mark_failed(n, comm::shm_segment::failure_cause::exited);
      return;
    }
    if (sample.state != process_state::stopped) {
      watch.stopped_since = absl::InfiniteFuture();
      continue;
    }
    if (watch.stopped_since == absl::InfiniteFuture()) watch.stopped_since = now;
    if (now - watch.stopped_since >= stopped_limit_) {
      segment_->mark_failed(n, comm::shm_segment::failure_cause::stopped);
      return;
    }
  }
}

absl::Status segment_bootstrap::put(std::string_view key, std::string_view value) {
  return own_board_.put(key, value);
}

absl::Status segment_bootstrap::fence(absl::Duration timeout) { return barrier(timeout); }

absl::StatusOr<std::string> segment_bootstrap::get(std::uint32_t node, std::string_view key) const {
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
