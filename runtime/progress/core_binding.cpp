#include "runtime/progress/core_binding.hpp"

#include <unistd.h>

#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "base/log.hpp"
#include "nicfw/nic_thread.hpp"

namespace iso::runtime {

binding_plan plan_binding(const binding_request& request,
                          absl::FunctionRef<std::uint32_t()> allowed_cores) {
  const bool asked = request.mode == iso::cpu_binding::core;
  switch (request.mode) {
    case iso::cpu_binding::none:
      return {};
    case iso::cpu_binding::automatic:
      if (!request.isorun_processes || request.local_nodes < 2) return {};
      break;
    case iso::cpu_binding::core:
      break;
  }
  if (request.launcher_binds) {
    return {.core = std::nullopt,
            .why_not = asked ? "a PMIx launcher's job: bind with the launcher (mpirun "
                               "--bind-to core)"
                             : ""};
  }
  const std::uint32_t cores = allowed_cores();
  if (cores == 0) {
    return {.core = std::nullopt,
            .why_not = asked ? "hwloc cannot tell which cores this process may use" : ""};
  }
  // A NIC thread shares its node's binding unless it has a core of its own.
  const std::uint32_t threads = (request.nic_thread ? 2 : 1) * request.local_nodes;
  if (cores < threads) {
    return {.core = std::nullopt,
            .why_not = asked ? absl::StrFormat(
                                   "%u %s%s on this host, and this process may use %u %s",
                                   request.local_nodes, request.local_nodes == 1 ? "node" : "nodes",
                                   request.nic_thread ? " with a NIC thread each" : "", cores,
                                   cores == 1 ? "core" : "cores")
                             : ""};
  }
  if (!asked && 2 * threads <= cores) return {};
  return {.core = request.local_index, .why_not = {}};
}

thread_binding thread_binding::bind(const binding_plan& plan) {
  thread_binding out;
  if (!plan.core) {
    if (!plan.why_not.empty()) {
      ISO_LOG(runtime, warn, "not binding to a core (ISO_BIND=core): %s", plan.why_not);
      out.where_ = absl::StrFormat("unbound: %s", plan.why_not);
    }
    return out;
  }
  cpu_set_t previous;
  CPU_ZERO(&previous);
  if (::sched_getaffinity(0, sizeof(previous), &previous) != 0) {
    out.where_ = "unbound: this thread's affinity cannot be read to be given back later";
    ISO_LOG(runtime, info, "not binding to core %u: %s", *plan.core, out.where_);
    return out;
  }
  absl::StatusOr<std::string> cpus = nicfw::bind_to_allowed_core(*plan.core);
  if (!cpus.ok()) {
    out.where_ = absl::StrFormat("unbound: %s", cpus.status().message());
    ISO_LOG(runtime, info, "not binding to core %u: %s", *plan.core, cpus.status().message());
    return out;
  }
  out.thread_ = ::gettid();
  out.previous_ = previous;
  out.where_ = absl::StrFormat("core %u (cpus %s)", *plan.core, *cpus);
  return out;
}

void thread_binding::restore() {
  // The thread may have ended by now: nothing to give back then.
  if (thread_ != 0) (void)::sched_setaffinity(thread_, sizeof(previous_), &previous_);
  thread_ = 0;
}

thread_binding::~thread_binding() { restore(); }

thread_binding::thread_binding(thread_binding&& other) noexcept
    : thread_(std::exchange(other.thread_, 0)),
      previous_(other.previous_),
      where_(std::move(other.where_)) {}

thread_binding& thread_binding::operator=(thread_binding&& other) noexcept {
  if (this != &other) {
    restore();
    thread_ = std::exchange(other.thread_, 0);
    previous_ = other.previous_;
    where_ = std::move(other.where_);
  }
  return *this;
}

}  // namespace iso::runtime
