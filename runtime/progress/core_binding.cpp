#include "runtime/progress/core_binding.hpp"

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "base/log.hpp"
#include "nicfw/nic_thread.hpp"

namespace iso::runtime {

binding_plan plan_binding(const binding_request& request, std::uint32_t allowed_cores) {
  switch (request.mode) {
    case iso::cpu_binding::none:
      return {};
    case iso::cpu_binding::automatic:
      if (!request.isorun_processes || request.local_nodes < 2) return {};
      break;
    case iso::cpu_binding::core:
      break;
  }
  const bool asked = request.mode == iso::cpu_binding::core;
  if (request.launcher_binds) {
    return {.core = std::nullopt,
            .why_not = asked ? "a PMIx launcher's job: bind with the launcher (mpirun "
                               "--bind-to core)"
                             : ""};
  }
  // A NIC thread shares its node's binding unless it has a core of its own.
  const std::uint32_t per_node = request.nic_thread ? 2 : 1;
  if (allowed_cores < per_node * request.local_nodes) {
    return {.core = std::nullopt,
            .why_not = asked ? absl::StrFormat("%u %s%s on this host, and this process may use "
                                               "%u %s",
                                               request.local_nodes,
                                               request.local_nodes == 1 ? "node" : "nodes",
                                               request.nic_thread ? " with a NIC thread each" : "",
                                               allowed_cores, allowed_cores == 1 ? "core" : "cores")
                             : ""};
  }
  return {.core = request.local_index, .why_not = {}};
}

std::string bind_node_thread(const binding_plan& plan) {
  if (!plan.core) {
    if (plan.why_not.empty()) return "unbound";
    ISO_LOG(runtime, warn, "not binding to a core (ISO_BIND=core): %s", plan.why_not);
    return absl::StrFormat("unbound: %s", plan.why_not);
  }
  absl::StatusOr<std::string> cpus = nicfw::bind_to_allowed_core(*plan.core);
  if (!cpus.ok()) {
    ISO_LOG(runtime, warn, "not binding to core %u: %s", *plan.core, cpus.status().message());
    return absl::StrFormat("unbound: %s", cpus.status().message());
  }
  return absl::StrFormat("core %u (cpus %s)", *plan.core, *cpus);
}

}  // namespace iso::runtime
