// The NIC's own thread: whether the machine has a core to spare for every NIC (and one for
// every application), which is when the runtime's automatic choice gives each NIC a thread,
// and pinning such a thread away from the applications. Uses hwloc for the core count and
// for pinning.
#pragma once

#include <cstdint>

namespace iso::nicfw {

// True when `local_nodes` nodes on this machine can each have a NIC thread on a core of its
// own (at least two cores per node).
bool cores_for_nic_threads(std::uint32_t local_nodes);

// Pins the calling NIC thread to a core kept away from the applications (the highest
// numbered cores go to NICs). Does nothing when the machine is too small or hwloc fails.
void pin_nic_thread(std::uint32_t local_nodes, std::uint32_t local_index);

}  // namespace iso::nicfw
