// The fabric of processes on one or many hosts that a PMIx launcher started (mpirun,
// srun --mpi=pmix): each process is one node, its port a comm::ucx_transport, its
// bootstrap the PMIx one. The transports find each other by publishing their UCX worker
// addresses through PMIx (put, fence, get) when a node opens its port. Nodes on one host
// reach each other over UCX's shared-memory lanes, and share memory windows
// (runtime/fabric/host_windows.hpp), so same-host reads work among them; there are none
// across hosts.
//
//   ISO_ASSIGN_OR_RETURN(std::shared_ptr<pmix_session> s, pmix_session::open());
//   auto fabric = std::make_shared<ucx_fabric>(s, comm::ucx_options{}, opts.window_bytes);
//   ISO_ASSIGN_OR_RETURN(auto port, fabric->open_transport(s->rank()));  // collective
//
// A failed node is learnt from the launcher's events and the nodes' own reports (the PMIx
// session), since UCX is run without peer-failure reports (they would cost the shared
// memory lanes).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "comm/ucx/ucx_transport.hpp"
#include "runtime/bootstrap/pmix_session.hpp"
#include "runtime/fabric/fabric.hpp"
#include "runtime/fabric/host_windows.hpp"

namespace iso::runtime {

class ucx_fabric final : public fabric {
 public:
  // How long opening the port waits for the other nodes' addresses.
  static constexpr absl::Duration kAddressExchangeTimeout = absl::Seconds(60);

  // `window_bytes`: each node's memory window (options::window_bytes; 0: none).
  ucx_fabric(std::shared_ptr<pmix_session> session, comm::ucx_options options,
             std::size_t window_bytes)
      : session_(std::move(session)), options_(std::move(options)), window_bytes_(window_bytes) {}

  [[nodiscard]] std::uint32_t nodes() const override { return session_->size(); }
  [[nodiscard]] std::uint32_t local_nodes() const override { return session_->local_size(); }
  // Collective: every node opens its port at once, and maps its host's memory windows.
  // InvalidArgument for a rank other than this process's; the transport's errors (named)
  // otherwise.
  [[nodiscard]] absl::StatusOr<std::unique_ptr<comm::transport>> open_transport(
      std::uint32_t rank) override;
  [[nodiscard]] std::unique_ptr<bootstrap> open_bootstrap(std::uint32_t rank,
                                                          absl::Duration stopped_limit) override;
  // Those of the nodes on this host, once this node's port is open.
  [[nodiscard]] std::vector<std::span<std::byte>> windows() const override {
    return host_windows_.spans();
  }
  void mark_failed(std::uint32_t rank) override { session_->note_failed(rank); }
  [[nodiscard]] absl::Status job_status() const override { return session_->job_status(); }

  // The lanes: the UCX transports this node's endpoints use (e.g. "posix,tcp"), empty
  // before its port opens.
  [[nodiscard]] fabric_description describe() const override;

 private:
  std::shared_ptr<pmix_session> session_;
  comm::ucx_options options_;
  std::size_t window_bytes_ = 0;
  host_windows host_windows_;
  mutable absl::Mutex mu_;
  std::string lanes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace iso::runtime
