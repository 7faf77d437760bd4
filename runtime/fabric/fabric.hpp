// Where a job runs, as a node needs it: its transport, its bootstrap, the memory windows of
// the nodes it can reach directly, and a way to tell the others it failed. run.cpp builds
// every node from a fabric and knows no backend:
//   - shm_fabric: processes on one host, in a segment isorun created (or a private one);
//   - inproc_fabric: threads of one process, over the in-process transport;
//   - ucx_fabric: processes on one or many hosts that a PMIx launcher started, bootstrapped
//     by PMIx (no windows across hosts).
//
//   std::shared_ptr<fabric> f = ...;
//   ISO_ASSIGN_OR_RETURN(std::unique_ptr<comm::transport> t, f->open_transport(rank));
//   std::unique_ptr<bootstrap> boot = f->open_bootstrap(rank, absl::Seconds(30));
//   ... on failure: f->mark_failed(rank);
//
// Thread safety: open_* for different ranks, mark_failed and job_status may be called from
// the threads of different nodes at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "comm/transport.hpp"
#include "runtime/bootstrap/bootstrap.hpp"

namespace iso::runtime {

// What a job runs on, for the settings table (node::status(), iso/status.hpp).
struct fabric_description {
  std::string fabric;     // shm, inproc or ucx
  std::string transport;  // the transport between nodes
  std::string lanes;      // what the transport found to carry packets (ucx: e.g. "posix,tcp")
};

class fabric {
 public:
  virtual ~fabric() = default;

  [[nodiscard]] virtual std::uint32_t nodes() const = 0;
  // How many nodes of the job share this machine, for where NIC threads run.
  [[nodiscard]] virtual std::uint32_t local_nodes() const = 0;

  // Node `rank`'s port, once per rank. Errors: the backend's (named).
  [[nodiscard]] virtual absl::StatusOr<std::unique_ptr<comm::transport>> open_transport(
      std::uint32_t rank) = 0;
  // Node `rank`'s bootstrap. `stopped_limit`: how long another node's process may stay
  // stopped before this one takes it for failed.
  [[nodiscard]] virtual std::unique_ptr<bootstrap> open_bootstrap(std::uint32_t rank,
                                                                  absl::Duration stopped_limit) = 0;
  // Every node's memory window as this process sees it, by node id: empty where the fabric
  // gives none (same-host reads are served from the others).
  [[nodiscard]] virtual std::vector<std::span<std::byte>> windows() const = 0;

  // Node `rank` failed: the others stop waiting for it. Never blocks.
  virtual void mark_failed(std::uint32_t rank) = 0;
  // OK while no node has failed; then Aborted, naming the node. Never blocks.
  [[nodiscard]] virtual absl::Status job_status() const = 0;
  // Which fabric, transport and lanes; the lanes once this process's ports are open.
  [[nodiscard]] virtual fabric_description describe() const = 0;
};

}  // namespace iso::runtime
