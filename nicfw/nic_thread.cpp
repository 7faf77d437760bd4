#include "nicfw/nic_thread.hpp"

#include <errno.h>
#include <hwloc.h>
#include <string.h>

#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace iso::nicfw {
namespace {

struct hwloc_topology_handle {
  hwloc_topology_handle() {
    initialized = hwloc_topology_init(&topo) == 0;
    ok = initialized && hwloc_topology_load(topo) == 0;
  }
  ~hwloc_topology_handle() {
    if (initialized) hwloc_topology_destroy(topo);
  }
  hwloc_topology_handle(const hwloc_topology_handle&) = delete;
  hwloc_topology_handle& operator=(const hwloc_topology_handle&) = delete;
  hwloc_topology_t topo{};
  bool initialized = false;
  bool ok = false;
};

struct bitmap {
  bitmap() : set(hwloc_bitmap_alloc()) {}
  ~bitmap() { hwloc_bitmap_free(set); }
  bitmap(const bitmap&) = delete;
  bitmap& operator=(const bitmap&) = delete;
  hwloc_bitmap_t set;
};

// The machine's topology, loaded once per process: a load takes 2 to 8 ms here, and a node
// asks up to four times as it starts (NIC threads or not, its cores, its binding, its NIC
// thread's core). Only read afterwards, which hwloc allows from several threads at once.
const hwloc_topology_handle& machine() {
  static const hwloc_topology_handle topology;
  return topology;
}

int core_count(const hwloc_topology_handle& h) {
  if (!h.ok) return 1;
  const int cores = hwloc_get_nbobjs_by_type(h.topo, HWLOC_OBJ_CORE);
  return cores > 0 ? cores : 1;
}

// The processors the calling thread may run on; false if hwloc cannot say.
bool thread_affinity(const hwloc_topology_handle& h, const bitmap& out) {
  return h.ok && out.set != nullptr &&
         hwloc_get_cpubind(h.topo, out.set, HWLOC_CPUBIND_THREAD) == 0;
}

// Calls `visit(core_cpuset)` for every core that shares a processor with `allowed`, in
// hwloc's order, until it returns false. A machine hwloc shows no cores on is taken
// processor by processor.
template <typename Visit>
void for_each_allowed_core(const hwloc_topology_handle& h, hwloc_const_bitmap_t allowed,
                           Visit visit) {
  const hwloc_obj_type_t unit =
      hwloc_get_nbobjs_by_type(h.topo, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
  for (hwloc_obj_t obj = hwloc_get_next_obj_by_type(h.topo, unit, nullptr); obj != nullptr;
       obj = hwloc_get_next_obj_by_type(h.topo, unit, obj)) {
    if (hwloc_bitmap_intersects(obj->cpuset, allowed) && !visit(obj->cpuset)) return;
  }
}

}  // namespace

bool cores_for_nic_threads(std::uint32_t local_nodes) { return machine_cores() >= 2 * local_nodes; }

std::uint32_t machine_cores() { return static_cast<std::uint32_t>(core_count(machine())); }

void pin_nic_thread(std::uint32_t local_nodes, std::uint32_t local_index) {
  const hwloc_topology_handle& h = machine();
  const int cores = core_count(h);
  if (!h.ok || static_cast<std::uint32_t>(cores) < 2 * local_nodes) return;
  hwloc_obj_t core =
      hwloc_get_obj_by_type(h.topo, HWLOC_OBJ_CORE, static_cast<unsigned>(cores) - 1 - local_index);
  if (core == nullptr) return;
  hwloc_set_cpubind(h.topo, core->cpuset, HWLOC_CPUBIND_THREAD);
}

std::uint32_t allowed_cores() {
  const hwloc_topology_handle& h = machine();
  const bitmap allowed;
  if (!thread_affinity(h, allowed)) return 0;
  std::uint32_t count = 0;
  for_each_allowed_core(h, allowed.set, [&](hwloc_const_bitmap_t) {
    ++count;
    return true;
  });
  return count;
}

absl::StatusOr<std::string> bind_to_allowed_core(std::uint32_t index) {
  const hwloc_topology_handle& h = machine();
  const bitmap allowed;
  if (!thread_affinity(h, allowed)) {
    return absl::FailedPreconditionError("hwloc cannot read this thread's CPU affinity");
  }
  const bitmap target;
  if (target.set == nullptr) return absl::ResourceExhaustedError("hwloc cannot allocate a bitmap");
  std::uint32_t seen = 0;
  for_each_allowed_core(h, allowed.set, [&](hwloc_const_bitmap_t core) {
    if (seen++ != index) return true;
    // Only the core's processors this thread may use: a narrower mask stays narrow.
    hwloc_bitmap_and(target.set, core, allowed.set);
    return false;
  });
  if (hwloc_bitmap_iszero(target.set)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "this thread may run on %u cores; there is no core %u among them", seen, index));
  }
  if (hwloc_set_cpubind(h.topo, target.set, HWLOC_CPUBIND_THREAD) != 0) {
    const int error = errno;
    return absl::FailedPreconditionError(
        absl::StrFormat("hwloc cannot bind this thread: %s", ::strerror(error)));
  }
  char* text = nullptr;
  if (hwloc_bitmap_list_asprintf(&text, target.set) < 0 || text == nullptr) return std::string();
  std::string list(text);
  std::free(text);  // NOLINT(cppcoreguidelines-no-malloc): hwloc allocates it with malloc
  return list;
}

}  // namespace iso::nicfw
