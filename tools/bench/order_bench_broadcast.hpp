// The ordered-broadcast section of the order benchmark: iso::ordered_group's latency and
// throughput on this job's nodes, as lines `order_lat_us <nodes> <us>` and
// `order_thru_mps <nodes> <messages per second>` that a driver collects (and beside them the
// MPI_Bcast peer's, order_bench_broadcast_mpi.cpp). Kept apart so that it can be folded
// into order-bench.
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

struct broadcast_config {
  std::size_t bytes = 64;
  int round_trips = 200;
  int messages = 200'000;  // per node
  iso::order_kind order = iso::order_kind::sequencer;
};

// Runs both measurements on `node` (every node of the job calls it) and prints node 0's
// lines to stdout.
void order_bench_broadcast(iso::node& node, const broadcast_config& cfg);

}  // namespace iso::bench
