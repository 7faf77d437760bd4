// The fabric of processes on one or many hosts that a PMIx launcher started (mpirun,
// srun --mpi=pmix): each process is one node, its port a comm::ucx_transport, its
// bootstrap the PMIx one. The transports find each other by publishing their UCX worker
// addresses through PMIx (put, fence, get) when a node opens its port. There are no
// memory windows across hosts, so windows() is empty and same-host reads are off.
//
//   ISO_ASSIGN_OR_RETURN(std::shared_ptr<pmix_session> s, pmix_session::open());
//   auto fabric = std::make_shared<ucx_fabric>(s, comm::ucx_options{});
//   ISO_ASSIGN_OR_RETURN(auto port, fabric->open_transport(s->rank()));  // collective
//
// A failed node is learnt from the launcher's events and the nodes' own reports (the PMIx
// session), since UCX is run without peer-failure reports (they would cost the shared
// memory lanes).
#pragma once

#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "comm/ucx/ucx_transport.hpp"
#include "runtime/bootstrap/pmix_session.hpp"
#include "runtime/fabric/fabric.hpp"

namespace iso::runtime {

class ucx_fabric final : public fabric {
 public:
  // How long opening the port waits for the other nodes' addresses.
  static constexpr absl::Duration kAddressExchangeTimeout = absl::Seconds(60);

  ucx_fabric(std::shared_ptr<pmix_session> session, comm::ucx_options options)
      : session_(std::move(session)), options_(std::move(options)) {}

  [[nodiscard]] std::uint32_t nodes() const override { return session_->size(); }
  [[nodiscard]] std::uint32_t local_nodes() const override { return session_->local_size(); }
  // Collective: every node opens its port at once. InvalidArgument for a rank other than
  // this process's; the transport's errors (named) otherwise.
  [[nodiscard]] absl::StatusOr<std::unique_ptr<comm::transport>> open_transport(
      std::uint32_t rank) override;
  [[nodiscard]] std::unique_ptr<bootstrap> open_bootstrap(std::uint32_t rank,
                                                          absl::Duration stopped_limit) override;
  [[nodiscard]] std::vector<std::span<std::byte>> windows() const override { return {}; }
  void mark_failed(std::uint32_t rank) override { session_->note_failed(rank); }
  [[nodiscard]] absl::Status job_status() const override { return session_->job_status(); }

  // The lanes: the UCX transports this node's endpoints use (e.g. "posix,tcp"), empty
  // before its port opens.
  [[nodiscard]] fabric_description describe() const override;

 private:
  std::shared_ptr<pmix_session> session_;
  comm::ucx_options options_;
  mutable absl::Mutex mu_;
  std::string lanes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace iso::runtime
