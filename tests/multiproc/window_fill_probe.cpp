// Fills every node's memory window: each node writes `count` variables of its own (their
// only copy is its own) and then reads back a sample of every other node's, checking each.
// Prints "window fill: ok" on node 0 when all is well. Run on a host whose /dev/shm cannot
// hold the windows (small_dev_shm_job.sh), it shows that the job runs without them rather
// than ending in SIGBUS when a page past the room is first touched.
//
//   window-fill-probe [count]      (default 600000 variables per node)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "iso/iso.hpp"

int main(int argc, char** argv) {
  const std::size_t count = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 600000;
  constexpr std::size_t kPerIsochron = 1000;
  return iso::run(argc, argv, [count](iso::node& node) {
    std::vector<iso::shared_array<std::int64_t>> of;
    for (iso::node_id n = 0; n < node.count(); ++n) {
      of.push_back(node.allocate<std::int64_t>(count, iso::placement::on(n)));
    }
    const iso::shared_array<std::int64_t>& mine = of[node.id()];
    auto value_of = [](iso::node_id n, std::size_t i) {
      return static_cast<std::int64_t>(n * 1000003 + i);
    };
    for (std::size_t first = 0; first < count; first += kPerIsochron) {
      iso::isochron iso(node);
      for (std::size_t i = first; i < std::min(count, first + kPerIsochron); ++i) {
        iso.write(mine[i], value_of(node.id(), i));
      }
    }
    node.quiesce();
    node.barrier();
    int wrong = 0;
    for (iso::node_id n = 0; n < node.count(); ++n) {
      for (std::size_t i = 0; i < count; i += count / 97 + 1) {
        iso::isochron iso(node);
        iso::value<std::int64_t> v = iso.read(of[n][i]);
        iso.end();
        if (v.get() != value_of(n, i)) ++wrong;
      }
    }
    node.barrier();
    if (wrong != 0) {
      throw iso::error(iso::error_code::internal,
                       "window fill: " + std::to_string(wrong) + " reads returned a wrong value");
    }
    if (node.id() == 0) {
      std::printf("window fill: ok, %zu variables per node\n", count);
      std::fflush(stdout);
    }
  });
}
