// fiber-bench: what fibers and fork cost, each beside a peer measured in the same run.
//
//   fiber switch   two fibers of node 0 yield to each other; per switch. Peer: yield()
//                  with no other fiber, which is a progress round only (node::poll).
//   fork           node 0 forks an empty procedure to node 1 and joins it; per round trip.
//                  Peer: a plain message to node 1 and its echo (send + receive), the
//                  smallest round trip between the two hosts.
//
//   build/bin/isorun -n 2 -- build/bin/fiber-bench     # both sections
//   build/bin/fiber-bench                              # one node: the fiber switch only
//
// Each section runs kReps repetitions and prints the median and the range, in ns, and the
// ratio of the medians.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <utility>
#include <vector>

#include "iso/iso.hpp"
#include "tools/bench_support/bench_stats.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

constexpr int kReps = 7;
constexpr int kSwitches = 200000;  // yields per fiber per repetition
constexpr int kRoundTrips = 2000;  // per repetition

double ns_per(clock_type::duration d, int count) {
  return std::chrono::duration<double, std::nano>(d).count() / count;
}

using iso::bench::summary;

// kReps samples, so never empty.
summary summarize(std::vector<double> v) { return *iso::bench::summarize(std::move(v)); }

void print(const char* what, const summary& s) {
  std::printf("%-42s %10.1f ns  [%.1f - %.1f]\n", what, s.median, s.min, s.max);
}

void fiber_switches(iso::node& node) {
  std::vector<double> switched, alone;
  for (int rep = 0; rep < kReps; ++rep) {
    auto start = clock_type::now();
    for (int i = 0; i < kSwitches; ++i) iso::yield(node);
    alone.push_back(ns_per(clock_type::now() - start, kSwitches));

    start = clock_type::now();
    auto ping = [&] {
      for (int i = 0; i < kSwitches; ++i) iso::yield(node);
    };
    iso::fiber a = iso::spawn(node, ping, {.name = "ping"});
    iso::fiber b = iso::spawn(node, ping, {.name = "pong"});
    a.join();
    b.join();
    // Each yield of a or b is one switch (main waits in join meanwhile).
    switched.push_back(ns_per(clock_type::now() - start, 2 * kSwitches));
  }
  const summary s = summarize(switched);
  const summary p = summarize(alone);
  print("fiber switch (yield between two fibers)", s);
  print("peer: yield with no other fiber (a round)", p);
  std::printf("%-42s %10.2f\n", "ratio", s.median / p.median);
}

void forks(iso::node& node) {
  std::vector<double> forked, echoed;
  const std::byte one{1};
  for (int rep = 0; rep < kReps; ++rep) {
    if (node.id() == 0) {
      auto start = clock_type::now();
      for (int i = 0; i < kRoundTrips; ++i) {
        node.send(1, std::span(&one, 1));
        (void)node.receive();
      }
      echoed.push_back(ns_per(clock_type::now() - start, kRoundTrips));
      start = clock_type::now();
      for (int i = 0; i < kRoundTrips; ++i) iso::fork(node, 1, "nothing").join();
      forked.push_back(ns_per(clock_type::now() - start, kRoundTrips));
    } else if (node.id() == 1) {
      for (int i = 0; i < kRoundTrips; ++i) {
        const iso::message m = node.receive();
        node.send(0, m.bytes());
      }
    }
    node.barrier();  // node 1 serves the forks while it waits here
  }
  if (node.id() != 0) return;
  const summary f = summarize(forked);
  const summary e = summarize(echoed);
  print("fork + join of an empty procedure", f);
  print("peer: message + echo", e);
  std::printf("%-42s %10.2f\n", "ratio", f.median / e.median);
}

}  // namespace

int main(int argc, char** argv) {
  return iso::run(argc, argv, [](iso::node& node) {
    iso::register_procedure(node, "nothing", [](iso::node&, std::span<const std::byte>) {});
    node.barrier();
    if (node.id() == 0) {
      std::printf("fiber-bench: %u node(s), medians of %d repetitions\n", node.count(), kReps);
      fiber_switches(node);
    }
    node.barrier();
    if (node.count() >= 2) forks(node);
    std::fflush(stdout);
  });
}
