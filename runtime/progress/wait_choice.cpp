#include "runtime/progress/wait_choice.hpp"

#include <sched.h>

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

bool job_oversubscribed(std::optional<bool> launcher_says, std::uint32_t nodes) {
  if (launcher_says) return *launcher_says;
  return nodes > usable_cores();
}

waiter_policy choose_waiter_policy(iso::wait_mode mode, bool oversubscribed) {
  switch (mode) {
    case iso::wait_mode::spin:
      return waiter_policy{};
    case iso::wait_mode::block:
      return waiter_policy::oversubscribed();
    case iso::wait_mode::automatic:
      break;
  }
  return oversubscribed ? waiter_policy::oversubscribed() : waiter_policy{};
}

}  // namespace iso::runtime
