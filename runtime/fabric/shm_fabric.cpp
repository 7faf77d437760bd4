#include "runtime/fabric/shm_fabric.hpp"

namespace iso::runtime {

absl::StatusOr<std::unique_ptr<comm::transport>> shm_fabric::open_transport(std::uint32_t rank) {
  return comm::make_shm_transport(segment(), rank);
}

}  // namespace iso::runtime
