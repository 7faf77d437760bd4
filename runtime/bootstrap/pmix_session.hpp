// This process's connection to a PMIx server (the launcher: Open MPI's mpirun, Slurm's srun
// --mpi=pmix): PMIx_Init once, the job's rank and size, byte values exchanged through
// PMIx_Put/Commit/Fence/Get, fences that do not block, and what the launcher's events say
// about failed processes. PMIx_Finalize runs when the last owner lets go, so whatever
// still needs the server (a transport closing its endpoints) keeps a reference.
//
//   ISO_ASSIGN_OR_RETURN(std::shared_ptr<pmix_session> s, pmix_session::open());
//   ISO_RETURN_IF_ERROR(s->put("address", bytes));
//   const std::uint64_t f = s->start_fence();  // every put before it becomes visible
//   while (!*s->fence_done(f)) ...
//   ISO_ASSIGN_OR_RETURN(std::string peer, s->get(1, "address"));
//
// One per process (PMIx allows one client per process). Thread safety: fence_done,
// job_status and note_failed may be called from any thread; the rest from one thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "runtime/bootstrap/fence_log.hpp"

namespace iso::runtime {

class pmix_session {
 public:
  // Whether the environment names a PMIx server (PMIX_RANK and PMIX_NAMESPACE, which every
  // PMIx launcher sets). Cheap; connects to nothing.
  [[nodiscard]] static bool launched_by_pmix();

  // Connects to the launcher's PMIx server, learns rank and size, and agrees on the job's
  // secret (rank 0 makes one and publishes it; a collective step). Unavailable when this
  // process was not started by a PMIx launcher (no PMIx variables, or PMIx_Init finds no
  // server: PMIX_ERR_UNREACHABLE), so that the caller can fall back; Internal for anything
  // else PMIx refuses, naming the call and PMIx's error.
  [[nodiscard]] static absl::StatusOr<std::shared_ptr<pmix_session>> open(
      absl::Duration timeout = absl::Seconds(60));
  ~pmix_session();
  pmix_session(const pmix_session&) = delete;
  pmix_session& operator=(const pmix_session&) = delete;

  [[nodiscard]] std::uint32_t rank() const { return rank_; }
  [[nodiscard]] std::uint32_t size() const { return size_; }
  // How many nodes of the job run on this host (PMIX_LOCAL_SIZE; 1 where PMIx does not say).
  [[nodiscard]] std::uint32_t local_size() const { return local_size_; }
  [[nodiscard]] const std::string& job_name() const { return nspace_; }
  [[nodiscard]] const std::string& secret() const { return secret_; }

  // Publishes `value` (any bytes) under `key` for every node; visible after the next fence.
  // InvalidArgument for an empty or over-long key.
  [[nodiscard]] absl::Status put(std::string_view key, std::string_view value);
  // Starts a fence over the whole job that also collects every node's puts; never blocks.
  // Returns its number, for fence_done(). An error from PMIx shows in fence_done().
  [[nodiscard]] std::uint64_t start_fence();
  // Whether fence `number` completed; Aborted when the job failed (naming the node: the
  // launcher says that one ended without saying which, so a node on this host is found by
  // its process being gone), Internal when PMIx failed the fence (asked again later, it
  // still failed).
  [[nodiscard]] absl::StatusOr<bool> fence_done(std::uint64_t number) const;
  // A fence, waited for: DeadlineExceeded after `timeout`, Aborted when the job failed.
  [[nodiscard]] absl::Status fence(absl::Duration timeout);
  // The value `node` put under `key` before a completed fence; looks only at what the fences
  // collected (it never asks a peer that may be gone). NotFound names node and key.
  [[nodiscard]] absl::StatusOr<std::string> get(std::uint32_t node, std::string_view key) const;

  // Node `node` failed: this process takes it so at once. The others learn it from the
  // launcher when this process ends with an error. Never blocks.
  void note_failed(std::uint32_t node);
  // This node leaves the job: failures noticed from now on do not concern it.
  void leave() { left_ = true; }
  // OK while no node has failed; then Aborted, naming the node and how it was learnt.
  [[nodiscard]] absl::Status job_status() const;
  // As job_status(), after looking whether a node on this host (one sharing this process
  // table) has lost its process, which then counts as failed. For when something of the
  // job went missing: a process that ends can take a fence's data with it.
  [[nodiscard]] absl::Status look_for_gone_nodes() const;

 private:
  pmix_session() = default;
  [[nodiscard]] absl::Status connect(absl::Duration timeout);
  [[nodiscard]] absl::Status agree_on_secret(absl::Duration timeout);
  // The processes of the nodes that share this one's process table (one host), from what
  // each published at the start; the others stay unknown.
  void learn_peer_processes(const std::string& own_table);
  // Records the first such node whose process is gone as failed.
  void name_gone_peers() const;

  struct peer_process {
    int pid = 0;  // 0: not watchable from here
    std::uint64_t start_time = 0;
  };
  std::vector<peer_process> peers_;
  // When a fence first said that a process ended (Unix ns; 0: never).
  mutable std::atomic<std::int64_t> partial_since_ns_{0};

  std::uint32_t rank_ = 0;
  std::uint32_t size_ = 0;
  std::uint32_t local_size_ = 1;
  std::string nspace_;
  std::string secret_;
  bool initialized_ = false;
  std::atomic<bool> left_{false};
  std::size_t handler_id_ = 0;
  bool handler_registered_ = false;
  // Fences in flight or done; PMIx writes into their records from its own thread.
  fence_log fences_;
};

}  // namespace iso::runtime
