#include "tools/bench/order_bench_ordered.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace iso::bench {
namespace {

using clock_type = std::chrono::steady_clock;

double micros(clock_type::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

double latency_us(iso::node& node, iso::ordered_group& g, const ordered_config& cfg) {
  const node_id last = node.count() - 1;
  const std::vector<std::byte> payload(cfg.bytes, std::byte{0x5a});
  std::vector<double> rounds;
  for (int i = 0; i < cfg.round_trips; ++i) {
    const auto start = clock_type::now();
    if (node.id() == 0) {
      g.submit(payload);
      g.flush();
    }
    // Everyone receives node 0's message; the last member answers through the group.
    (void)g.receive();
    if (node.id() == last && last != 0) {
      g.submit(payload);
      g.flush();
    }
    if (last != 0) (void)g.receive();
    rounds.push_back(micros(clock_type::now() - start) / 2);
  }
  std::sort(rounds.begin(), rounds.end());
  return rounds[rounds.size() / 2];
}

double throughput_mps(iso::node& node, iso::ordered_group& g, const ordered_config& cfg) {
  const std::vector<std::byte> payload(cfg.bytes, std::byte{0x33});
  const std::size_t total = static_cast<std::size_t>(cfg.messages) * node.count();
  node.barrier();
  const auto start = clock_type::now();
  std::size_t received = 0;
  for (int i = 0; i < cfg.messages; ++i) {
    g.submit(payload);
    // try_receive() sends the batch first: drain once a batch's worth was submitted, not
    // after every message, or every batch would hold one message.
    if (i % 256 == 255) {
      while (g.try_receive()) ++received;
    }
  }
  g.flush();
  while (received < total) {
    (void)g.receive();
    ++received;
  }
  const double seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  return static_cast<double>(total) / seconds;
}

}  // namespace

void ordered_section(iso::node& node, const ordered_config& cfg, iso::order_kind order) {
  std::vector<node_id> all(node.count());
  for (node_id i = 0; i < node.count(); ++i) all[i] = i;
  iso::ordered_group g(node, all, order);
  const double lat = latency_us(node, g, cfg);
  const double thru = throughput_mps(node, g, cfg);
  node.barrier();
  if (node.id() == 0) {
    const char* name = order == iso::order_kind::isotach ? "isotach" : "sequencer";
    std::printf("%s_lat_us %u %.3f\n", name, node.count(), lat);
    std::printf("%s_thru_mps %u %.0f\n", name, node.count(), thru);
    std::fflush(stdout);
  }
}

}  // namespace iso::bench
