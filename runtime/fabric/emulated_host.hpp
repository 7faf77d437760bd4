// Emulated hosts for tests of jobs that span hosts, on one machine: a node moves into a
// network namespace of its own (made beforehand, as `ip netns add` does: /run/netns/<name>)
// and an IPC namespace of its own, so that UCX cannot reach the other nodes through
// shared memory and uses the network between the namespaces.
//
// Called after the node has joined its PMIx launcher: the connection to the PMIx server
// (TCP on the loopback of the namespace the process started in) stays where it was made,
// as do the threads that PMIx started; the calling thread and the threads it starts later
// (the NIC's, UCX's) live in the new namespaces.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace iso::runtime {

// The network namespace of node `rank`'s host, where each host holds `nodes_per_host`
// consecutive nodes: <prefix><rank / nodes_per_host> (tools/netns-job.sh makes them).
std::string emulated_host_name(const std::string& prefix, std::uint32_t rank,
                               std::uint32_t nodes_per_host);

// FailedPrecondition naming the namespace and the system's reason (no such namespace,
// not permitted).
absl::Status enter_emulated_host(const std::string& netns_name);

}  // namespace iso::runtime
