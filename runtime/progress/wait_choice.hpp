// Which waiter policy a node uses (iso::wait_mode): whether a waiting node polls for its
// answer or sleeps in the kernel until a packet comes. With more nodes than cores a node
// that polls holds the core the node it waits for needs, so `automatic` sleeps then. A
// node whose NIC thread has no core of its own (a thread forced where the machine has
// none to spare) yields at once instead of polling: what it waits for comes through that
// thread, which may share its core.
//
// Except that `automatic`, where it sleeps so, polls and yields instead while its host has
// a core to spare (waiter_policy::spare_cores).
//
//   const std::uint32_t cores = iso::usable_cores();
//   const bool over = job_oversubscribed(plan.env.oversubscribed, nodes, cores);
//   event_loop loop(nic, choose_waiter_policy(opts.wait, over, false, cores), job_status);
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "iso/options.hpp"
#include "runtime/progress/event_loop.hpp"

namespace iso::runtime {

// Whether the `nodes` nodes of a job on this machine outnumber the `cores` they run on: what
// the launcher found (`launcher_says`, from ISO_OVERSUBSCRIBED) or, without one, the count.
// The cores: those this process may use (iso::usable_cores()) where the nodes are its
// threads; the machine's (nicfw::machine_cores()) where they are processes that a PMIx
// launcher started, which binds each to cores of its own, so that one process's affinity
// says nothing of how many share the machine.
bool job_oversubscribed(std::optional<bool> launcher_says, std::uint32_t nodes,
                        std::uint32_t cores);

// Whether a node's NIC thread (`nic_thread`: one runs) shares a core with the job's other
// threads: the job is oversubscribed, or the machine has fewer than two cores per local
// node (nicfw::cores_for_nic_threads; elsewhere each NIC thread is pinned to a core of its
// own). Only a thread forced by options::nic can: nic_mode::automatic starts none then.
bool nic_shares_core(bool nic_thread, bool oversubscribed, std::uint32_t local_nodes);

// How a node waits: the policy, and the choice in words with its reason
// (node_status::waiting).
struct waiting_choice {
  waiter_policy policy;
  std::string why;
};

// The choice for `mode`; `automatic` blocks exactly when `oversubscribed`, except while
// fewer of the host's other nodes are busy than its `cores` (then it polls and yields:
// waiter_policy::spare_cores; pass 0 where the transport cannot tell; a node whose NIC
// thread shares a core never does), and otherwise yields without polling first when
// `nic_shares_core`.
waiting_choice choose_waiting(iso::wait_mode mode, bool oversubscribed, bool nic_shares_core,
                              std::uint32_t cores);
// Its policy alone.
inline waiter_policy choose_waiter_policy(iso::wait_mode mode, bool oversubscribed,
                                          bool nic_shares_core, std::uint32_t cores) {
  return choose_waiting(mode, oversubscribed, nic_shares_core, cores).policy;
}

}  // namespace iso::runtime
