#include "runtime/fabric/shm_fabric.hpp"

#include "runtime/bootstrap/segment_bootstrap.hpp"

namespace iso::runtime {

absl::StatusOr<std::unique_ptr<comm::transport>> shm_fabric::open_transport(std::uint32_t rank) {
  return comm::make_shm_transport(segment_, rank);
}

std::unique_ptr<bootstrap> shm_fabric::open_bootstrap(std::uint32_t rank,
                                                      absl::Duration stopped_limit) {
  return std::make_unique<segment_bootstrap>(segment_, rank, secret_, stopped_limit);
}

std::vector<std::span<std::byte>> shm_fabric::windows() const {
  std::vector<std::span<std::byte>> out;
  for (std::uint32_t n = 0; n < segment_->nodes(); ++n) out.push_back(segment_->window(n));
  return out;
}

}  // namespace iso::runtime
