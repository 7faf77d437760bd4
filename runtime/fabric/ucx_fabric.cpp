#include "runtime/fabric/ucx_fabric.hpp"

#include <vector>

#include "absl/strings/str_format.h"
#include "base/log.hpp"
#include "runtime/bootstrap/pmix_bootstrap.hpp"

namespace iso::runtime {
namespace {

constexpr char kAddressKey[] = "ucx.address";

}  // namespace

absl::StatusOr<std::unique_ptr<comm::transport>> ucx_fabric::open_transport(std::uint32_t rank) {
  if (rank != session_->rank()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("this process is node %u of the PMIx job, so it cannot open node %u's port",
                        session_->rank(), rank));
  }
  absl::StatusOr<std::unique_ptr<comm::ucx_transport>> port =
      comm::ucx_transport::create(rank, session_->size(), options_);
  if (!port.ok()) return port.status();
  // The addresses travel through the PMIx session directly: the node's bootstrap does not
  // exist yet, and its keys are the callers'.
  if (absl::Status s = session_->put(kAddressKey, (*port)->worker_address()); !s.ok()) return s;
  if (absl::Status s = session_->fence(kAddressExchangeTimeout); !s.ok()) return s;
  std::vector<std::string> addresses;
  addresses.reserve(session_->size());
  for (std::uint32_t n = 0; n < session_->size(); ++n) {
    absl::StatusOr<std::string> address = session_->get(n, kAddressKey);
    if (!address.ok()) return address.status();
    addresses.push_back(*std::move(address));
  }
  if (absl::Status s = (*port)->connect(addresses); !s.ok()) return s;
  absl::StatusOr<host_windows> windows =
      host_windows::open(*session_, window_bytes_, kAddressExchangeTimeout);
  if (!windows.ok()) return windows.status();
  host_windows_ = *std::move(windows);
  {
    absl::MutexLock lock(&mu_);
    lanes_ = (*port)->lanes();
    ISO_LOG(runtime, debug, "node %u reaches the others over ucx lanes %s", rank, lanes_);
  }
  return std::unique_ptr<comm::transport>(*std::move(port));
}

std::unique_ptr<bootstrap> ucx_fabric::open_bootstrap(std::uint32_t /*rank*/,
                                                      absl::Duration /*stopped_limit*/) {
  // The launcher watches the processes, stopped or gone; the session hears of them.
  return std::make_unique<pmix_bootstrap>(session_);
}

fabric_description ucx_fabric::describe() const {
  absl::MutexLock lock(&mu_);
  return {.fabric = "ucx", .transport = "ucx active messages (PMIx bootstrap)", .lanes = lanes_};
}

}  // namespace iso::runtime
