#include "comm/ucx/ucx_transport.hpp"

namespace iso::comm {

struct ucx_transport::state {};

absl::StatusOr<std::unique_ptr<ucx_transport>> ucx_transport::create(node_id rank, node_id size,
                                                                     const ucx_options&) {
  (void)rank;
  (void)size;
  return absl::UnimplementedError("the ucx transport is not implemented yet");
}

ucx_transport::ucx_transport(node_id rank, node_id size, std::unique_ptr<state> s)
    : transport(rank, size), state_(std::move(s)) {}
ucx_transport::~ucx_transport() = default;

std::string ucx_transport::worker_address() const { return {}; }
absl::Status ucx_transport::connect(std::span<const std::string>) {
  return absl::UnimplementedError("the ucx transport is not implemented yet");
}
std::string ucx_transport::lanes() const { return {}; }
std::size_t ucx_transport::max_packet_size() const { return 0; }
absl::Status ucx_transport::send(node_id, std::span<const byte_span>) {
  return absl::UnimplementedError("the ucx transport is not implemented yet");
}
absl::Status ucx_transport::poll(packet_upcall, std::size_t& handled, std::size_t) {
  handled = 0;
  return absl::OkStatus();
}
void ucx_transport::wait(absl::Duration, absl::FunctionRef<bool()>) {}
void ucx_transport::wake() {}
transport_counters ucx_transport::counters() const { return {}; }
void ucx_transport::release_held(node_id, std::uint64_t) {}

}  // namespace iso::comm
