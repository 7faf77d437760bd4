// Whether a node binds its thread to a core of its own (iso::cpu_binding), and doing so.
// Two nodes that share a core take turns: one polls for an answer the other, descheduled,
// cannot give until the poller's time slice ends. Unbound on a machine the job fills, the
// scheduler puts a job's nodes on one core now and then, and runs of one program then
// differ by 3 to 15 times; bound one per core they never meet.
//
//   const binding_plan plan = plan_binding(request, [] { return nicfw::allowed_cores(); });
//   thread_binding bound = thread_binding::bind(plan);   // until `bound` is destroyed
//   bound.where();                                       // "core 1 (cpus 1)" or "unbound"
#pragma once

#include <sched.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "absl/functional/function_ref.h"
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

// What `request` comes to; `allowed_cores` counts the cores the node may use (0: unknown),
// and is called only where the answer depends on it. Pure, but for what that calls.
// automatic binds where the job's threads take more than half of those cores: there the
// scheduler has little room and puts nodes together; on a roomy machine it does not, and
// jobs that ran side by side, each binding from the first core, would crowd onto the same
// few cores.
binding_plan plan_binding(const binding_request& request,
                          absl::FunctionRef<std::uint32_t()> allowed_cores);

// The calling thread bound as a plan says, until this is destroyed (from any thread): then
// the thread gets back the processors it had, so that nothing after the node (threads
// started after iso::run returned, a later job in the same process) inherits the binding.
class thread_binding {
 public:
  thread_binding() = default;
  // Binds the calling thread as `plan` says. A binding that cannot be made is logged (as
  // a warning where it was asked for) and leaves the thread unbound.
  static thread_binding bind(const binding_plan& plan);
  ~thread_binding();
  thread_binding(thread_binding&& other) noexcept;
  thread_binding& operator=(thread_binding&& other) noexcept;
  thread_binding(const thread_binding&) = delete;
  thread_binding& operator=(const thread_binding&) = delete;

  // node_status::binding's text: "core 1 (cpus 1)", "unbound", or "unbound: <why>".
  [[nodiscard]] const std::string& where() const { return where_; }

 private:
  void restore();

  pid_t thread_ = 0;  // bound, and to be given `previous_` back; 0: nothing to restore
  cpu_set_t previous_{};
  std::string where_ = "unbound";
};

}  // namespace iso::runtime
