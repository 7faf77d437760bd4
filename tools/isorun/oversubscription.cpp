#include "tools/isorun/oversubscription.hpp"

#include "absl/strings/str_format.h"

namespace iso::isorun {

std::string oversubscription_notice(std::uint32_t nodes, std::uint32_t cores) {
  // Not "isorun: ", which starts isorun's errors: this line is no failure.
  return absl::StrFormat(
      "isorun (oversubscribed): %u nodes on %u %s; a waiting node sleeps until a packet comes "
      "instead of polling, unless the other nodes leave a core free (ISO_WAIT=auto; "
      "ISO_WAIT=spin polls anyway)\n",
      nodes, cores, cores == 1 ? "core" : "cores");
}

}  // namespace iso::isorun
