// order-bench-broadcast: the ordered-broadcast section of the order benchmark on its own,
// until it is folded into order-bench. Run it under isorun (one line per figure, from node
// 0); tools/bench/run_order_bench_broadcast.sh runs it beside MPI_Bcast.
//
//   isorun -n 4 build/bin/order-bench-broadcast [--quick]
#include <cstring>

#include "tools/bench/order_bench_broadcast.hpp"

int main(int argc, char** argv) {
  iso::bench::broadcast_config cfg;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      cfg.round_trips = 50;
      cfg.messages = 20'000;
    }
  }
  return iso::run(argc, argv,
                  [&](iso::node& node) { iso::bench::order_bench_broadcast(node, cfg); });
}
