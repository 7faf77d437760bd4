// A node's rank in its job, as the shared memory manager's parts name it: the same numbering
// as iso::node_id (the public API) and comm::node_id (the transports), spelled here so that a
// part that only needs the integer includes neither the API's headers nor a lower layer's.
#pragma once

#include <cstdint>

namespace iso::runtime {

using node_id = std::uint32_t;

}  // namespace iso::runtime
