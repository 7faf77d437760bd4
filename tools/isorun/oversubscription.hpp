// Whether a job has more nodes than the cores isorun may run them on (iso::usable_cores(),
// the count the nodes' own ISO_WAIT=auto uses). Such a job's nodes share cores, and a node
// that polls for another's answer holds the core the other needs: isorun says so and tells
// the nodes (ISO_OVERSUBSCRIBED=1), whose waiting then sleeps instead (ISO_WAIT=auto),
// except while the other nodes leave a core to spare.
#pragma once

#include <cstdint>
#include <string>

namespace iso::isorun {

// The one line isorun prints for a job of `nodes` nodes on `cores` cores (nodes > cores).
std::string oversubscription_notice(std::uint32_t nodes, std::uint32_t cores);

}  // namespace iso::isorun
