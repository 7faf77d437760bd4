// A place in isotach's global order of execution, for operations that run outside a pulse
// (purely local isochrons and same-host reads) and must still sit at one point in it.
#pragma once

#include <compare>
#include <cstdint>

namespace iso::runtime {

// (pulse, slot, rank, kind): slot is the pid for an operation of the pulse and node count +
// pid after it; kind 0 is a same-host read that sits right before that rank (of the copy's
// owner), 1 the isochron itself.
struct order_point {
  std::uint64_t pulse = 0;
  std::uint32_t slot = 0;
  std::uint64_t rank = 0;
  std::uint32_t kind = 0;
  // NOLINTNEXTLINE(modernize-use-nullptr): a false positive on defaulted comparisons
  auto operator<=>(const order_point&) const = default;
};

}  // namespace iso::runtime
