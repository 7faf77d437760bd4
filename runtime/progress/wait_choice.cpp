#include "runtime/progress/wait_choice.hpp"

#include <sched.h>

#include "nicfw/nic_thread.hpp"

namespace iso {

std::uint32_t usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  const int count = CPU_COUNT(&set);
  return count > 0 ? static_cast<std::uint32_t>(count) : 1;
}

}  // namespace iso

namespace iso::runtime {

bool job_oversubscribed(std::optional<bool> launcher_says, std::uint32_t nodes,
                        std::uint32_t cores) {
  if (launcher_says) return *launcher_says;
  return nodes > cores;
}

bool nic_shares_core(bool nic_thread, bool oversubscribed, std::uint32_t local_nodes) {
  // The machine's cores, as nicfw::pin_nic_thread counts them: where there are two per
  // node, each NIC thread is pinned to a core of its own, whatever the process's affinity.
  return nic_thread && (oversubscribed || !nicfw::cores_for_nic_threads(local_nodes));
}

waiting_choice choose_waiting(iso::wait_mode mode, bool oversubscribed, bool nic_shares_core,
                              std::uint32_t cores) {
  switch (mode) {
    case iso::wait_mode::spin:
      return {waiter_policy{}, "polls, then yields, then sleeps (ISO_WAIT=spin)"};
    case iso::wait_mode::block:
      return {waiter_policy::oversubscribed(), "sleeps at once (ISO_WAIT=block)"};
    case iso::wait_mode::automatic:
      break;
  }
  if (oversubscribed) {
    // A node with a NIC thread waits on that thread's ring (event_loop::wait_rounds), never
    // by polling the transport itself.
    const std::uint32_t spare = nic_shares_core ? 0 : cores;
    return {waiter_policy::oversubscribed(spare),
            spare > 0 ? "sleeps at once unless a core is spare: more nodes than cores"
                      : "sleeps at once: more nodes than cores"};
  }
  if (nic_shares_core) {
    return {waiter_policy::shared_core(), "yields, then sleeps: its NIC thread shares a core"};
  }
  return {waiter_policy{}, "polls, then yields, then sleeps"};
}

}  // namespace iso::runtime
