// How the nodes of a job find each other before any transport runs: rank, size, the
// per-job secret, a key-value exchange and a barrier. The shm implementation works inside
// the job segment; a PMIx implementation will sit behind the same interface (put/fence/get
// are PMIx's PMIx_Put/PMIx_Fence/PMIx_Get), so nothing above depends on which one runs.
//
//   ISO_RETURN_IF_ERROR(boot.put("address", my_address));
//   ISO_RETURN_IF_ERROR(boot.fence(absl::Seconds(10)));
//   ISO_ASSIGN_OR_RETURN(std::string peer_address, boot.get(peer, "address"));
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace iso::runtime {

class bootstrap {
 public:
  virtual ~bootstrap() = default;

  [[nodiscard]] virtual std::uint32_t rank() const = 0;
  [[nodiscard]] virtual std::uint32_t size() const = 0;
  // Shared by the members of the job and nobody else; never logged.
  [[nodiscard]] virtual const std::string& job_secret() const = 0;

  // Publishes key=value for this node; visible to others after the next fence().
  // ResourceExhausted when this node's board is full; InvalidArgument for an empty key.
  [[nodiscard]] virtual absl::Status put(std::string_view key, std::string_view value) = 0;
  // A barrier that also makes every put() before it visible to every node.
  [[nodiscard]] virtual absl::Status fence(absl::Duration timeout) = 0;
  // The value `node` put under `key` before the last fence. NotFound names node and key.
  [[nodiscard]] virtual absl::StatusOr<std::string> get(std::uint32_t node,
                                                        std::string_view key) const = 0;
  // Waits for every node; DeadlineExceeded after `timeout`, Aborted when the job failed.
  [[nodiscard]] virtual absl::Status barrier(absl::Duration timeout) = 0;
  // The barrier in two steps, for a node that must keep serving others while it waits:
  // arrive, then test until passed (Aborted when the job failed). Never blocks. `digest`
  // names the collective call this node makes there (runtime/collective_digest.hpp).
  [[nodiscard]] virtual std::uint64_t barrier_arrive(std::uint64_t digest) = 0;
  [[nodiscard]] virtual absl::StatusOr<bool> barrier_passed(std::uint64_t ticket) const = 0;
  // Once barrier `ticket` passed: the digest `node` arrived with.
  [[nodiscard]] virtual std::uint64_t barrier_digest(std::uint32_t node,
                                                     std::uint64_t ticket) const = 0;
  // Whether `node` has arrived at barrier `ticket` (to name the missing after a time-out).
  [[nodiscard]] virtual bool barrier_arrived(std::uint32_t node, std::uint64_t ticket) const = 0;
  // A monotone per-node mark published before barrier_arrive() and reduced with max after
  // the barrier passed (the node runtime publishes the last logical time it issued for).
  virtual void publish_mark(std::uint64_t value) = 0;
  [[nodiscard]] virtual std::uint64_t max_mark() const = 0;
  // Tells the other nodes this one failed, so their bootstrap calls stop waiting.
  virtual void abort_job() = 0;
  // This node leaves the job (it passed the job's end barrier): from now on its process
  // may end without the others taking it for failed.
  virtual void leave() = 0;
  // OK while no node has failed; then Aborted, naming the node. A node whose process ended
  // before it left the job, or that stays stopped (SIGSTOP, a debugger) for longer than the
  // bootstrap's limit, counts as failed: the first to notice marks it so. Never blocks.
  [[nodiscard]] virtual absl::Status job_status() const = 0;
};

}  // namespace iso::runtime
