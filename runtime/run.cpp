#include "iso/run.hpp"

#include <atomic>
#include <cstdio>
#include <exception>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/log.hpp"
#include "comm/fault_injection.hpp"
#include "comm/shm_segment.hpp"
#include "nicfw/engine.hpp"
#include "nicfw/nic_thread.hpp"
#include "nicfw/topology.hpp"
#include "runtime/bootstrap/launch_environment.hpp"
#include "runtime/config.hpp"
#include "runtime/fabric/inproc_fabric.hpp"
#include "runtime/fabric/shm_fabric.hpp"
#ifdef ISO_HAVE_UCX
#include "runtime/fabric/emulated_host.hpp"
#include "runtime/fabric/ucx_fabric.hpp"
#endif
#include "runtime/job.hpp"
#include "runtime/node_state.hpp"
#include "runtime/progress/core_binding.hpp"
#include "runtime/progress/wait_choice.hpp"

namespace iso {
namespace {

// Each node's memory window, whatever the fabric: none without same-host reads.
std::size_t window_bytes_of(const options& opts) {
  return opts.direct_reads ? opts.window_bytes : 0;
}

comm::shm_options segment_options(const options& opts) {
  return comm::shm_options{.ring_capacity = opts.ring_capacity,
                           .join_timeout = absl::FromChrono(opts.join_timeout),
                           .shuffle_poll_order = opts.shuffle,
                           .window_bytes = window_bytes_of(opts)};
}

// Whether the NIC runs on a thread of its own; automatic: when `local_nodes` nodes on this
// machine leave a core to spare for each NIC, and the job is not oversubscribed (the
// machine may have the cores, but not the job: taskset or cgroups for isorun's jobs; for
// a PMIx launcher's, cgroups only, as hwloc sees them, since the launcher binds each
// process to cores of its own).
bool nic_threaded(const options& opts, std::uint32_t local_nodes, bool oversubscribed) {
  switch (opts.nic) {
    case nic_mode::thread:
      return true;
    case nic_mode::inline_poll:
      return false;
    case nic_mode::automatic:
      break;
  }
  return !oversubscribed && nicfw::cores_for_nic_threads(local_nodes);
}

absl::StatusOr<std::shared_ptr<const nicfw::topology>> load_topology(const options& opts,
                                                                     std::uint32_t nodes) {
  if (opts.topology_file.empty()) {
    return std::make_shared<const nicfw::topology>(nicfw::topology::single_switch(nodes));
  }
  absl::StatusOr<nicfw::topology> topo = nicfw::load_topology(opts.topology_file, nodes);
  if (!topo.ok()) return topo.status();
  return std::make_shared<const nicfw::topology>(*std::move(topo));
}

// Runs one node's body between the start and end barriers; returns whether it succeeded.
bool run_node(runtime::fabric& fabric, std::uint32_t rank, const runtime::job_plan& plan,
              const std::function<void(node&)>& body) {
  try {
    std::unique_ptr<node> self = runtime::make_node(fabric, rank, plan);
    self->barrier();  // start: nobody sends before everyone can receive
    ISO_LOG(runtime, debug, "node %u of %u started", rank, fabric.nodes());
    body(*self);
    runtime::leave_job(*self);
    ISO_LOG(runtime, debug, "node %u finished", rank);
    return true;
  } catch (const std::exception& e) {
    ISO_LOG(runtime, error, "node %u failed: %s", rank, e.what());
    fabric.mark_failed(rank);  // the node (and its bootstrap) is gone by now
    return false;
  }
}

// Set once this process has tried to join a launched (shm) job: its descriptors are spent
// (the segment's is closed with the node), and its rank is claimed in the segment.
std::atomic<bool> g_joined_launched_job{false};

// Joins this process's node of a job started by a launcher, once per process.
absl::StatusOr<std::shared_ptr<runtime::fabric>> join_launched_fabric(
    const runtime::job_plan& plan) {
  const runtime::launch_environment& env = plan.env;
  if (g_joined_launched_job.exchange(true)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "this process has already joined its job as node %u (iso::run or iso_init); a process "
        "joins a job started by isorun once",
        *env.rank));
  }
  if (absl::Status s = runtime::claim_launch_descriptors(env); !s.ok()) return s;
  comm::shm_options options = segment_options(plan.opts);
  options.report_fd = env.report_fd.value_or(-1);
  absl::StatusOr<std::shared_ptr<comm::shm_segment>> segment =
      comm::shm_segment::join(*env.shm_fd, *env.rank, env.size, env.secret, options);
  if (!segment.ok()) return segment.status();
  return std::make_shared<runtime::shm_fabric>(*std::move(segment), env.secret);
}

// A job whose every node this process hosts (inproc, or no launcher at all).
absl::StatusOr<std::shared_ptr<runtime::fabric>> make_private_fabric(
    const runtime::job_plan& plan) {
  const options& opts = plan.opts;
  absl::StatusOr<std::shared_ptr<runtime::inproc_fabric>> fabric =
      runtime::inproc_fabric::create(plan.env.size, plan.env.secret,
                                     {.ring_capacity = opts.ring_capacity,
                                      .shuffle_poll_order = opts.shuffle,
                                      .window_bytes = opts.direct_reads ? opts.window_bytes : 0});
  if (!fabric.ok()) return fabric.status();
  return std::shared_ptr<runtime::fabric>(*std::move(fabric));
}

// This process's node of a job that a PMIx launcher started.
absl::StatusOr<std::shared_ptr<runtime::fabric>> make_ucx_fabric(const runtime::job_plan& plan) {
#ifdef ISO_HAVE_UCX
  if (!plan.test.netns_prefix.empty()) {
    const std::string host = runtime::emulated_host_name(plan.test.netns_prefix, *plan.env.rank,
                                                         plan.test.nodes_per_host);
    if (absl::Status s = runtime::enter_emulated_host(host); !s.ok()) return s;
  }
  return std::make_shared<runtime::ucx_fabric>(plan.pmix, comm::ucx_options{},
                                               window_bytes_of(plan.opts));
#else
  (void)plan;
  return absl::FailedPreconditionError(
      "a ucx job (ISO_TRANSPORT=ucx, or started by a PMIx launcher), but this build of iso has "
      "no UCX transport: UCX (libucx-dev) was not found when it was built");
#endif
}

int start_failure(const absl::Status& status) {
  std::fprintf(stderr, "iso: cannot start the job: %s\n", std::string(status.message()).c_str());
  return 1;
}

}  // namespace

int run(int argc, char** argv, const options& requested, const std::function<void(node&)>& body) {
  (void)argc;
  (void)argv;
  absl::StatusOr<runtime::job_plan> plan = runtime::plan_job(requested);
  if (!plan.ok()) return start_failure(plan.status());
  const runtime::launch_environment& env = plan->env;

  if (env.transport == runtime::transport_kind::ucx) {
    auto fabric = make_ucx_fabric(*plan);
    if (!fabric.ok()) return start_failure(fabric.status());
    return run_node(**fabric, *env.rank, *plan, body) ? 0 : 1;
  }
  if (env.transport == runtime::transport_kind::shm && env.shm_fd) {
    auto fabric = join_launched_fabric(*plan);
    if (!fabric.ok()) return start_failure(fabric.status());
    return run_node(**fabric, *env.rank, *plan, body) ? 0 : 1;
  }

  // inproc, or no launcher at all: this process hosts every node of the job.
  auto fabric = make_private_fabric(*plan);
  if (!fabric.ok()) return start_failure(fabric.status());
  if (env.size == 1) return run_node(**fabric, 0, *plan, body) ? 0 : 1;
  std::atomic<bool> all_ok{true};
  std::vector<std::thread> threads;
  for (std::uint32_t rank = 0; rank < env.size; ++rank) {
    threads.emplace_back([&, rank] {
      if (!run_node(**fabric, rank, *plan, body)) all_ok = false;
    });
  }
  for (std::thread& t : threads) t.join();
  return all_ok ? 0 : 1;
}

int run(int argc, char** argv, const std::function<void(node&)>& body) {
  return run(argc, argv, options{}, body);
}

namespace runtime {

absl::StatusOr<job_plan> plan_job(const options& requested, bool have_ucx) {
  absl::StatusOr<options> opts = apply_environment(requested);
  if (!opts.ok()) return opts.status();
  absl::StatusOr<launch_environment> env = read_launch_environment(have_ucx);
  if (!env.ok()) return env.status();
  std::shared_ptr<pmix_session> pmix;
  if (env->transport == transport_kind::ucx || env->pmix_without_fabric) {
    if (absl::Status s = join_pmix_launcher(*env, pmix); !s.ok()) return s;
  }
  absl::StatusOr<std::shared_ptr<const nicfw::topology>> topo = load_topology(*opts, env->size);
  if (!topo.ok()) return topo.status();
  absl::StatusOr<test_settings> test = read_test_settings();
  if (!test.ok()) return test.status();
  return job_plan{.opts = *std::move(opts),
                  .env = *std::move(env),
                  .topo = *std::move(topo),
                  .test = *std::move(test),
                  .pmix = std::move(pmix)};
}

std::unique_ptr<node> make_node(fabric& fabric, std::uint32_t rank, const job_plan& plan) {
  base::set_log_node(static_cast<int>(rank));
  absl::StatusOr<std::unique_ptr<comm::transport>> port = fabric.open_transport(rank);
  if (!port.ok()) detail::throw_status(port.status());
  std::unique_ptr<comm::transport> transport = *std::move(port);
  // A peer stopped for half the barrier time-out fails the job before a barrier that waits
  // for it would, so the error names the stopped node and why.
  std::unique_ptr<bootstrap> boot =
      fabric.open_bootstrap(rank, absl::FromChrono(plan.opts.barrier_timeout) / 2);
  // Under a PMIx launcher the nodes on this machine are its processes, each bound to cores
  // of its own: they share the machine's cores (runtime/progress/wait_choice.hpp).
  const bool launcher_binds = plan.env.transport == runtime::transport_kind::ucx;
  const std::uint32_t cores = launcher_binds ? nicfw::machine_cores() : iso::usable_cores();
  const bool oversubscribed =
      runtime::job_oversubscribed(plan.env.oversubscribed, fabric.local_nodes(), cores);
  const bool nic_thread = nic_threaded(plan.opts, fabric.local_nodes(), oversubscribed);
  // A NIC thread that shares a core sleeps as soon as it is idle: its spin would hold the
  // core the thread that sends its next work needs.
  const bool shared_core =
      runtime::nic_shares_core(nic_thread, oversubscribed, fabric.local_nodes());
  const nicfw::engine_options nic_options{
      .own_thread = nic_thread,
      .local_nodes = fabric.local_nodes(),
      .local_index = rank,
      .spin = shared_core ? absl::ZeroDuration() : absl::FromChrono(plan.opts.nic_spin),
      .credit_window = plan.opts.credit_window,
      .paranoid = plan.opts.paranoid};
  if (!plan.test.fault.empty()) {
    // Validated by plan_job; the fault is this node's alone (the plan names a destination).
    transport = comm::with_faults(std::move(transport), *comm::parse_fault_plan(plan.test.fault));
  }
  auto nic = std::make_unique<nicfw::engine>(rank, plan.topo, std::move(transport), nic_options);
  runtime::waiting_choice waiting =
      runtime::choose_waiting(plan.opts.wait, oversubscribed, shared_core,
                              // Only a ring fabric's nodes see whether their host's others wait.
                              launcher_binds ? 0 : cores);
  if (plan.opts.relaxed) {
    ISO_LOG(runtime, warn,
            "node %u runs in RELAXED mode (options::relaxed): NOT sequentially consistent, "
            "for teaching only",
            rank);
  }
  auto state = std::make_unique<detail::node_state>(std::move(boot), std::move(nic), plan.opts,
                                                    fabric.windows(), waiting.policy);
  state->set_fabric(fabric.describe());
  state->set_waiting(std::move(waiting.why));
  // Once the NIC's thread runs (the state started it): it keeps the processors it had, or
  // the core pin_nic_thread gave it, and never shares this node's.
  state->set_binding(runtime::thread_binding::bind(runtime::plan_binding(
      {.mode = plan.opts.binding,
       .isorun_processes =
           plan.env.transport == runtime::transport_kind::shm && plan.env.shm_fd.has_value(),
       .launcher_binds = launcher_binds,
       .local_nodes = fabric.local_nodes(),
       .local_index = rank,
       .nic_thread = nic_thread},
      [] { return nicfw::allowed_cores(); })));
  return detail::node_state::make_node(std::move(state));
}

void leave_job(node& self) {
  // A fiber left running would be cut off mid-way, its work and its waits lost.
  detail::node_state& state = detail::node_state::of(self);
  absl::Status ended = state.forks().await_processes();  // processes of the job, as in Orca
  if (ended.ok()) ended = state.fibers().check_all_ended("the body returned");
  // A dropped write told to go out again must not leave with this node.
  if (ended.ok()) ended = state.settle_dropped_objects(/*leaving=*/true);
  // Before the drain below, which would wait forever for a read of a variable this node
  // scheduled and never assigned.
  if (ended.ok()) ended = state.smm().drain_issued();
  if (ended.ok()) ended = state.smm().check_no_read_awaits_own_assign("the body returned");
  if (!ended.ok()) {
    state.fail(ended);
    detail::throw_status(ended);
  }
  self.quiesce();  // everything this node issued has executed here
  // End: every node keeps serving the others until all are done.
  detail::throw_if_error(state.end_barrier());
  detail::node_state::of(self).leave();  // this process may end now: nobody needs it
}

absl::StatusOr<process_node> join_process_node(const job_plan& plan) {
  const launch_environment& env = plan.env;
  process_node joined;
  if (env.transport == transport_kind::ucx) {
    auto fabric = make_ucx_fabric(plan);
    if (!fabric.ok()) return fabric.status();
    joined.fabric = *std::move(fabric);
    joined.rank = *env.rank;
  } else if (env.transport == transport_kind::shm && env.shm_fd) {
    auto fabric = join_launched_fabric(plan);
    if (!fabric.ok()) return fabric.status();
    joined.fabric = *std::move(fabric);
    joined.rank = *env.rank;
  } else if (env.size == 1) {
    auto fabric = make_private_fabric(plan);
    if (!fabric.ok()) return fabric.status();
    joined.fabric = *std::move(fabric);
  } else {
    return absl::FailedPreconditionError(absl::StrFormat(
        "the job is an inproc job of %u nodes, all hosted by this process; joining one node "
        "needs one node per process (launch with --transport shm)",
        env.size));
  }
  try {
    joined.self = make_node(*joined.fabric, joined.rank, plan);
  } catch (const std::exception& e) {
    joined.fabric->mark_failed(joined.rank);
    return absl::InternalError(
        absl::StrFormat("node %u could not start: %s", joined.rank, e.what()));
  }
  return joined;
}

}  // namespace runtime
}  // namespace iso
