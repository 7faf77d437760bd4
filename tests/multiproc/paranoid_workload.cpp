// A small mixed workload for paranoid-mode tests: plain messages, isochrons with writes,
// reads and isotach messages between every pair of nodes. With ISO_PARANOID=1 every packet
// and every remote part is checked; node 0 prints "paranoid workload: OK" at the end.
#include <cstdio>
#include <cstring>
#include <vector>

#include "iso/iso.hpp"

int main(int argc, char** argv) {
  return iso::run(argc, argv, [](iso::node& node) {
    auto x = node.allocate<std::int64_t>(node.count());
    node.barrier();
    constexpr int kRounds = 300;
    std::int64_t sum = 0;
    for (int round = 0; round < kRounds; ++round) {
      const std::int64_t value = round;
      std::vector<std::int64_t> block(32, value);  // 256-byte messages
      for (iso::node_id to = 0; to < node.count(); ++to) {
        node.send(to, std::as_bytes(std::span(block)));
      }
      iso::isochron iso(node);
      iso.write(x[node.id()], value);
      iso::value<std::int64_t> v = iso.read(x[(node.id() + 1) % node.count()]);
      for (iso::node_id to = 0; to < node.count(); ++to) {
        iso.send(to, std::as_bytes(std::span(block)));
      }
      iso.end();
      sum += v.get();
      for (iso::node_id from = 0; from < node.count(); ++from) {
        (void)node.receive();
        (void)node.iso_receive();
      }
    }
    node.barrier();
    if (node.id() == 0) std::printf("paranoid workload: OK (%lld)\n", static_cast<long long>(sum));
  });
}
