#include "tools/isorun/oversubscription.hpp"

#include <sched.h>

#include "absl/strings/str_format.h"

namespace iso::isorun {

std::uint32_t usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  const int count = CPU_COUNT(&set);
  return count > 0 ? static_cast<std::uint32_t>(count) : 1;
}

std::string oversubscription_notice(std::uint32_t nodes, std::uint32_t cores) {
  // Not "isorun: ", which starts isorun's errors: this line is no failure.
  return absl::StrFormat(
      "isorun (oversubscribed): %u nodes on %u %s; a waiting node sleeps until a packet comes "
      "instead of polling (ISO_WAIT=auto; ISO_WAIT=spin polls anyway)\n",
      nodes, cores, cores == 1 ? "core" : "cores");
}

}  // namespace iso::isorun
