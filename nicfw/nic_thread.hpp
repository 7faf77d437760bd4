// Where a node's threads run. The NIC's own thread: whether the machine has a core to spare
// for every NIC (and one for every application), which is when the runtime's automatic
// choice gives each NIC a thread, and pinning such a thread away from the applications. The
// application's thread: binding it to a core of its own among those this process may use
// (iso::cpu_binding). Uses hwloc for the core counts and for binding.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace iso::nicfw {

// True when `local_nodes` nodes on this machine can each have a NIC thread on a core of its
// own (at least two cores per node).
bool cores_for_nic_threads(std::uint32_t local_nodes);

// The machine's cores, as hwloc counts them (hardware threads of one core counting once),
// whatever this process may run on; 1 if hwloc cannot tell.
std::uint32_t machine_cores();

// Pins the calling NIC thread to a core kept away from the applications (the highest
// numbered cores go to NICs). Does nothing when the machine is too small or hwloc fails.
void pin_nic_thread(std::uint32_t local_nodes, std::uint32_t local_index);

// How many cores the calling thread may run on now (its affinity, counted in cores as hwloc
// sees them, hardware threads of one core counting once); 0 if hwloc cannot tell.
std::uint32_t allowed_cores();

// Binds the calling thread to the `index`th core (from 0, in hwloc's order) of those it may
// run on now; threads it starts later inherit the binding. Returns the processors of that
// core as a list ("3", "6-7"). Errors: FailedPrecondition when there is no such core or
// hwloc cannot bind (naming why).
absl::StatusOr<std::string> bind_to_allowed_core(std::uint32_t index);

}  // namespace iso::nicfw
