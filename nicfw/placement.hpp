// Where the NIC runs: its own thread when the machine has a core to spare for every NIC
// (and one for every application), inline in the host's poll loop otherwise. Uses hwloc
// for the core count and for pinning.
#pragma once

#include <cstdint>

namespace iso::nicfw {

enum class placement;

// True when the NIC should have its own thread.
bool choose_thread_mode(placement requested, std::uint32_t local_nodes);

// Pins the calling NIC thread to a core kept away from the applications (the highest
// numbered cores go to NICs). Does nothing when the machine is too small or hwloc fails.
void pin_nic_thread(std::uint32_t local_nodes, std::uint32_t local_index);

}  // namespace iso::nicfw
