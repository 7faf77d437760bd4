// order-bench's ordered-message section: iso::ordered_group in both orders on this job's
// nodes, run by `order-bench --only=ordered` on 2, 4 and 8 nodes beside MPI_Bcast
// (order_bench_mpi.cpp). A worker prints node 0's lines, indexed by the node count:
//   <order>_lat_us <nodes> <us>       latency of one ordered message to the last member
//   <order>_thru_mps <nodes> <msg/s>  ordered messages per second with batching
// with <order> `sequencer` or `isotach`; both orders run in the same job, one after the
// other, so their figures come from the same machine state.
//
//   latency     node 0 submits a message of `bytes`; when the last member receives it, it
//               submits one back; half of node 0's median round trip. Every member
//               receives both (they are ordered messages, not replies).
//   throughput  every node submits `messages` messages of `bytes` (batched); messages
//               per second at node 0, from the start barrier until it received all.
#pragma once

#include <cstddef>

#include "iso/iso.hpp"

namespace iso::bench {

struct ordered_config {
  std::size_t bytes = 64;
  int round_trips = 200;
  int messages = 200'000;  // per node
};

// Measures one order on `node` (every node of the job calls it) and prints node 0's lines.
void ordered_section(iso::node& node, const ordered_config& cfg, iso::order_kind order);

}  // namespace iso::bench
