#include "runtime/fabric/segment_fabric.hpp"

#include "runtime/bootstrap/segment_bootstrap.hpp"

namespace iso::runtime {

std::unique_ptr<bootstrap> segment_fabric::open_bootstrap(std::uint32_t rank,
                                                          absl::Duration stopped_limit) {
  return std::make_unique<segment_bootstrap>(segment_, rank, secret_, stopped_limit);
}

std::vector<std::span<std::byte>> segment_fabric::windows() const {
  std::vector<std::span<std::byte>> out;
  for (std::uint32_t n = 0; n < segment_->nodes(); ++n) out.push_back(segment_->window(n));
  return out;
}

}  // namespace iso::runtime
