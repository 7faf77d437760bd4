// The memory windows of a job that a PMIx launcher started (runtime/fabric/ucx_fabric.hpp):
// the nodes that share a host map one POSIX shared memory object, a window each, so that a
// ucx job serves reads of a copy held by another node of its host from that node's window
// (runtime/smm/same_host_reads.hpp), as a job isorun started does. A node on another host
// has no window here; reads of its copies take the NIC path.
//
// "One host" is one running kernel (its boot id) seen through one network namespace: a
// process in a network namespace of its own (an emulated host, tools/netns-job.sh, or a
// container) is a host of its own even on the same machine. Nodes of one host whose
// /dev/shm differs (mount namespaces of their own) cannot open the object by its name: they
// run without windows, as below.
//
//   ISO_ASSIGN_OR_RETURN(host_windows w, host_windows::open(*session, 16 << 20, timeout));
//   std::vector<std::span<std::byte>> by_node = w.spans();  // empty where not on this host
//
// Collective: every node of the job calls open() once, at the same point of its start (it
// takes three of the session's fences). The object's name is removed once every node of
// the host has mapped it, or as soon as open() fails, so nothing stays in /dev/shm after
// the job. Only a lowest node killed (SIGKILL) between its first and third fence leaves
// the name behind, with the memory it reserved; the next job's lowest node on the host
// removes it (the name carries its maker's pid, and that process is gone). Thread safety:
// none needed (one per process, read-only after open()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "runtime/bootstrap/pmix_session.hpp"

namespace iso::runtime {

class host_windows {
 public:
  host_windows() = default;  // no windows
  host_windows(host_windows&& other) noexcept;
  host_windows& operator=(host_windows&& other) noexcept;
  host_windows(const host_windows&) = delete;
  host_windows& operator=(const host_windows&) = delete;
  ~host_windows();

  // Maps this host's windows, `window_bytes` each (rounded up to whole pages); 0 means
  // this node takes part in no windows (same-host reads off). The nodes of a host use the
  // size of its lowest node. Where the shared object cannot be made or mapped on one node
  // of a host, none of that host's nodes has windows (a warning says why), and the job
  // runs on without them. Errors: the session's fence (DeadlineExceeded after `timeout`,
  // Aborted naming a failed node).
  [[nodiscard]] static absl::StatusOr<host_windows> open(pmix_session& session,
                                                         std::size_t window_bytes,
                                                         absl::Duration timeout);

  // Every node's window by node id; empty for nodes on other hosts, and for all of them
  // where there are none.
  [[nodiscard]] std::vector<std::span<std::byte>> spans() const;
  // How many nodes share this host's windows, this one included (0: none).
  [[nodiscard]] std::uint32_t sharing() const {
    return static_cast<std::uint32_t>(members_.size());
  }

  // What makes a host, as this process sees it ("" where /proc cannot say: then it shares
  // with nobody).
  [[nodiscard]] static std::string host_identity();

 private:
  void release() noexcept;

  std::byte* base_ = nullptr;
  std::size_t mapped_bytes_ = 0;
  std::size_t stride_ = 0;
  std::uint32_t nodes_ = 0;
  std::vector<std::uint32_t> members_;  // node ids sharing the windows, ascending
};

}  // namespace iso::runtime
