// Whether a node binds its thread to a core of its own (iso::cpu_binding), and doing so.
// Two nodes that share a core take turns: one polls for an answer the other, descheduled,
// cannot give until the poller's time slice ends. Unbound, the scheduler puts a job's
// nodes on one core now and then, and runs of one program then differ by 3 to 15 times;
// bound one per core they never meet.
//
//   const binding_plan plan = plan_binding(request, nicfw::allowed_cores());
//   std::string where = bind_node_thread(plan);   // "core 1 (cpus 1)" or "unbound"
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "iso/options.hpp"

namespace iso::runtime {

struct binding_request {
  iso::cpu_binding mode = iso::cpu_binding::automatic;
  // Started by isorun, one process per node on this host (not threads of one process,
  // not a PMIx launcher's job).
  bool isorun_processes = false;
  // A PMIx launcher's job: its launcher binds (mpirun --bind-to), and node ids are no
  // index among the nodes of one host.
  bool launcher_binds = false;
  std::uint32_t local_nodes = 1;  // the job's nodes on this host
  std::uint32_t local_index = 0;  // this node's place among them
  bool nic_thread = false;        // the node's NIC runs on a thread of its own
};

struct binding_plan {
  // The core to bind to, counted among those the node may use; none: stay unbound.
  std::optional<std::uint32_t> core;
  // Why not, when a binding was asked for (cpu_binding::core) and cannot be made; empty
  // when it was not asked for.
  std::string why_not;
};

// What `request` comes to on a node that may use `allowed_cores` cores. Pure.
binding_plan plan_binding(const binding_request& request, std::uint32_t allowed_cores);

// Binds the calling thread as `plan` says; returns node_status::binding's text. A binding
// hwloc refuses is logged and leaves the thread unbound.
std::string bind_node_thread(const binding_plan& plan);

}  // namespace iso::runtime
