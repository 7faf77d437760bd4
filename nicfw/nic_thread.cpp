#include "nicfw/nic_thread.hpp"

#include <hwloc.h>

namespace iso::nicfw {
namespace {

struct hwloc_topology_handle {
  hwloc_topology_handle() {
    ok = hwloc_topology_init(&topo) == 0 && hwloc_topology_load(topo) == 0;
  }
  ~hwloc_topology_handle() { hwloc_topology_destroy(topo); }
  hwloc_topology_t topo{};
  bool ok = false;
};

int core_count(const hwloc_topology_handle& h) {
  if (!h.ok) return 1;
  const int cores = hwloc_get_nbobjs_by_type(h.topo, HWLOC_OBJ_CORE);
  return cores > 0 ? cores : 1;
}

}  // namespace

bool cores_for_nic_threads(std::uint32_t local_nodes) {
  hwloc_topology_handle h;
  return static_cast<std::uint32_t>(core_count(h)) >= 2 * local_nodes;
}

void pin_nic_thread(std::uint32_t local_nodes, std::uint32_t local_index) {
  hwloc_topology_handle h;
  const int cores = core_count(h);
  if (!h.ok || static_cast<std::uint32_t>(cores) < 2 * local_nodes) return;
  hwloc_obj_t core =
      hwloc_get_obj_by_type(h.topo, HWLOC_OBJ_CORE, static_cast<unsigned>(cores) - 1 - local_index);
  if (core == nullptr) return;
  hwloc_set_cpubind(h.topo, core->cpuset, HWLOC_CPUBIND_THREAD);
}

}  // namespace iso::nicfw
