// A place in isotach's global order of execution, for operations that run outside a pulse
// (purely local isochrons and same-host reads) and must still sit at one point in it.
#pragma once

#include <compare>
#include <cstdint>
#include <tuple>

namespace iso::runtime {

// (pulse, step, slot, rank, kind). slot is the pid for an operation of the pulse, and node
// count + pid for one after it; kind 0 is a same-host read that sits right before that
// rank (of the copy's owner), 1 the isochron itself.
//
// `step` orders what runs between two pulses, where no pulse does. It is a Lamport clock
// (0 for every operation of a pulse): a node's purely local isochrons take a step no lower
// than anything the node has seen, and a same-host read may raise its owner's step (in the
// owner's window) so that the copy it read stays valid up to the place it needs. Ordering
// by step, and only then by node, lets two nodes read each other's copies in turn without
// waiting for a pulse: with the node alone deciding, a lower node's local isochron after
// a read of a higher node's copy would sit before that read and need the next pulse.
struct order_point {
  std::uint64_t pulse = 0;
  std::uint64_t step = 0;
  std::uint32_t slot = 0;
  std::uint64_t rank = 0;
  std::uint32_t kind = 0;
  // NOLINTNEXTLINE(modernize-use-nullptr): a false positive on defaulted comparisons
  auto operator<=>(const order_point&) const = default;
};

// The lowest step at which (pulse, step, slot, rank, kind) sits at or after `floor` (or
// strictly after it, with `strictly`); the caller makes sure `pulse` >= floor.pulse.
[[nodiscard]] inline std::uint64_t step_from(const order_point& floor, std::uint64_t pulse,
                                             std::uint32_t slot, std::uint64_t rank,
                                             std::uint32_t kind, bool strictly) {
  if (pulse > floor.pulse) return 0;
  const auto rest = std::tie(slot, rank, kind);
  const auto floor_rest = std::tie(floor.slot, floor.rank, floor.kind);
  const bool fits = strictly ? rest > floor_rest : rest >= floor_rest;
  return fits ? floor.step : floor.step + 1;
}

}  // namespace iso::runtime
