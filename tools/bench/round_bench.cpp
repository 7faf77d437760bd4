// round-bench: what an idle round of progress costs, the price a waiting node pays between
// two looks at the network (docs/hot-path.md). Node 0 calls node.poll() with nothing to do
// while node 1 waits in a barrier:
//   idle round, bare          right after start-up: no object, no ordered group;
//   idle round, with objects  once a shared object exists (the objects' table and order
//                             take part in every round from then on).
// Beside them, in the same run, the one-way latency of an 8-byte plain message (half a
// ping-pong), what idle rounds delay: a spinning receiver notices a message only at its next
// poll of the transport.
//
//   build/bin/isorun -n 2 -- build/bin/round-bench
//
// Each figure is the median, minimum and maximum over kReps repetitions, in nanoseconds. An
// idle round is timed in the CPU time of node 0's thread, so that a machine busy with other
// work (which takes the core from it now and then) does not count; the one-way latency is
// wall-clock time, since waiting for the peer is what it measures.
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "iso/iso.hpp"
#include "tools/bench_support/bench_stats.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

constexpr int kReps = 9;
constexpr int kPolls = 200000;     // per repetition
constexpr int kRoundTrips = 5000;  // per repetition

using iso::bench::summarize;
using iso::bench::summary;

void print(const char* what, const summary& s) {
  std::printf("%-34s %10.1f ns  [%.1f - %.1f]\n", what, s.median, s.min, s.max);
}

double ns_per(clock_type::duration d, int count) {
  return std::chrono::duration<double, std::nano>(d).count() / count;
}

// CPU time of the calling thread, in nanoseconds.
double thread_cpu_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

// Node 0's idle polls, in CPU time; the others wait in the barrier that follows.
summary idle_rounds(iso::node& node) {
  std::vector<double> samples;
  if (node.id() == 0) {
    for (int i = 0; i < kPolls / 10; ++i) node.poll();  // warm-up
    for (int rep = 0; rep < kReps; ++rep) {
      const double start = thread_cpu_ns();
      for (int i = 0; i < kPolls; ++i) node.poll();
      samples.push_back((thread_cpu_ns() - start) / kPolls);
    }
  }
  node.barrier();
  return node.id() == 0 ? *summarize(std::move(samples)) : summary{};
}

// One-way latency of 8-byte plain messages between nodes 0 and 1, as node 0 sees it.
summary one_way(iso::node& node) {
  std::vector<double> samples;
  const std::byte eight[8] = {};
  for (int rep = 0; rep < kReps + 1; ++rep) {  // the first is a warm-up
    const auto start = clock_type::now();
    for (int i = 0; i < kRoundTrips; ++i) {
      if (node.id() == 0) {
        node.send(1, eight);
        (void)node.receive();
      } else if (node.id() == 1) {
        (void)node.receive();
        node.send(0, eight);
      }
    }
    if (rep > 0) samples.push_back(ns_per(clock_type::now() - start, 2 * kRoundTrips));
  }
  node.barrier();
  return node.id() == 0 ? *summarize(std::move(samples)) : summary{};
}

// An object type with nothing in it: creating one is what starts the objects' machinery.
iso::object_type empty_type() {
  iso::state_functions state;
  state.create = [](std::span<const std::byte>) -> void* { return new char(0); };
  state.destroy = [](void* s) { delete static_cast<char*>(s); };
  state.clone = [](const void* s) -> void* { return new char(*static_cast<const char*>(s)); };
  return iso::object_type("Empty", std::move(state));
}

}  // namespace

int main(int argc, char** argv) {
  return iso::run(argc, argv, [](iso::node& node) {
    if (node.count() < 2) {
      std::fprintf(stderr, "round-bench: run it on 2 nodes (isorun -n 2)\n");
      return;
    }
    node.barrier();
    const summary bare = idle_rounds(node);
    const summary message = one_way(node);
    const iso::object_type type = empty_type();
    iso::object object(node, type, {.placement = iso::object_placement::replicated});
    node.barrier();
    const summary with_objects = idle_rounds(node);
    if (node.id() != 0) return;
    std::printf("round-bench: %u nodes, medians of %d repetitions\n", node.count(), kReps);
    print("idle round, bare", bare);
    print("idle round, with objects", with_objects);
    print("peer: one-way 8 B plain message", message);
    std::printf("%-34s %10.2f\n", "ratio (bare round / one-way)", bare.median / message.median);
    std::fflush(stdout);
  });
}
