// atomic-bench: a shared counter incremented through isochrons, beside OpenSHMEM's
// shmem_atomic_fetch_add measured in the same run. On 2 processes node 0 increments while
// the other serves, as the OpenSHMEM peer's PE 0 does against PE 1. On 4 processes (more
// than the 2 cores of our test machines: oversubscribed) every node increments the one
// counter, whose only copy is on node 1, and so does every PE of the peer; the figure is
// node 0's (PE 0's) time per increment of its own.
//   fetch_add, remote copy:   the counter's only copy is on the other node; one isochron
//                             with iso.fetch_add, the old value back from that copy.
//   fetch_add, every copy:    a copy on every node; the answer comes from this node's copy
//                             once the isochron has executed here.
//   read + sched / assign:    the idiom without read-modify-writes: an isochron that reads
//                             and reserves the counter, then one that assigns the new value.
//
//   build/bin/atomic-bench            # drives: isorun -n 2 and -n 4 for ours, oshrun for the
//                                     # peer, alternating
//   build/bin/atomic-bench --quick    # fewer repetitions
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_format.h"
#include "iso/iso.hpp"
#include "tools/bench/iso_bench_common.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

// The oversubscribed job: more processes than the 2 cores of our test machines.
constexpr int kEveryNodeCount = 4;

double micros(clock_type::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

// Mean microseconds of one increment by `increment`, over `iterations`.
template <typename F>
double mean_us(int iterations, F&& increment) {
  const auto start = clock_type::now();
  for (int i = 0; i < iterations; ++i) increment();
  return micros(clock_type::now() - start) / iterations;
}

void worker(iso::node& node, int repetitions, int iterations) {
  auto remote = node.allocate<std::int64_t>(1, iso::placement::on(1))[0];
  auto everywhere = node.allocate<std::int64_t>(1, iso::placement::everywhere())[0];
  auto done = node.allocate<std::int64_t>(1, iso::placement::on(1))[0];
  node.barrier();
  if (node.id() != 0) {
    iso::bench::serve_until(node, done);
  } else {
    std::int64_t expected = 0;
    std::int64_t wrong = 0;
    for (int rep = 0; rep < repetitions; ++rep) {
      const double fetch_add_remote = mean_us(iterations, [&] {
        iso::isochron iso(node);
        iso::value<std::int64_t> old = iso.fetch_add(remote, 1);
        iso.end();
        wrong += old.get() != expected++;
      });
      const double fetch_add_everywhere = mean_us(iterations, [&] {
        iso::isochron iso(node);
        iso::value<std::int64_t> old = iso.fetch_add(everywhere, 1);
        iso.end();
        (void)old.get();
      });
      const double sched_assign = mean_us(iterations, [&] {
        iso::value<std::int64_t> old;
        {
          iso::isochron iso(node);
          old = iso.read(remote);
          iso.sched(remote);
        }
        iso::isochron iso(node);
        iso.assign(remote, old.get() + 1);
        wrong += old.get() != expected++;
      });
      std::printf("fetch_add_remote_us %.4f\nfetch_add_everywhere_us %.4f\nsched_assign_us %.4f\n",
                  fetch_add_remote, fetch_add_everywhere, sched_assign);
      std::fflush(stdout);
    }
    if (wrong != 0) {
      std::fprintf(stderr, "atomic-bench: %lld increments returned a wrong old value\n",
                   static_cast<long long>(wrong));
      std::exit(1);
    }
    iso::bench::set_done(node, done);
  }
  node.barrier();
}

// Every node increments the counter, `iterations` times per repetition and method; node 0
// prints its own time per increment. The final value checks that no increment was lost.
void every_node_worker(iso::node& node, int repetitions, int iterations) {
  auto counter = node.allocate<std::int64_t>(1, iso::placement::on(1))[0];
  node.barrier();
  for (int rep = 0; rep < repetitions; ++rep) {
    const double fetch_add = mean_us(iterations, [&] {
      iso::isochron iso(node);
      iso::value<std::int64_t> old = iso.fetch_add(counter, 1);
      iso.end();
      (void)old.get();
    });
    node.barrier();
    const double sched_assign = mean_us(iterations, [&] {
      iso::value<std::int64_t> old;
      {
        iso::isochron iso(node);
        old = iso.read(counter);
        iso.sched(counter);
      }
      iso::isochron iso(node);
      iso.assign(counter, old.get() + 1);
    });
    node.barrier();
    if (node.id() == 0) {
      std::printf("all_fetch_add_us/%u %.4f\nall_sched_assign_us/%u %.4f\n", node.count(),
                  fetch_add, node.count(), sched_assign);
      std::fflush(stdout);
    }
  }
  iso::isochron look(node);
  iso::value<std::int64_t> total = look.read(counter);
  look.end();
  const std::int64_t expected = std::int64_t{2} * repetitions * iterations * node.count();
  if (total.get() != expected) {
    std::fprintf(stderr, "atomic-bench: node %u sees the counter at %lld, not %lld\n", node.id(),
                 static_cast<long long>(total.get()), static_cast<long long>(expected));
    std::exit(1);
  }
  node.barrier();
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<iso::bench::bench_args> args =
      iso::bench::parse_bench_args(argc, argv, "atomic-bench", false);
  if (!args) return 2;
  const bool quick = args->quick;
  const int repetitions = quick ? 3 : 9;
  const int iterations = quick ? 1000 : 10000;
  if (args->as_worker) {
    iso::options opts;
    opts.nic = args->mode;
    return iso::run(argc, argv, opts, [&](iso::node& node) {
      if (node.count() == 2) {
        worker(node, repetitions, iterations);
      } else {
        // Every node's increments wait for the others': fewer keep a repetition short.
        every_node_worker(node, repetitions, iterations / 5);
      }
    });
  }

  const std::string bin = iso::bench::program_directory();
  const std::string self = bin + "/atomic-bench";
  const std::string flags =
      std::string(quick ? " --quick" : "") + (args->nic.empty() ? "" : " --nic " + args->nic);
  iso::bench::sample_table ours, peer;
  const bool have_peer = iso::bench::shmem_peer_built(bin);
  const int rounds = quick ? 1 : 3;
  std::printf(
      "atomic-bench: a shared counter, 2 processes and 4 processes (shm), %d rounds x %d "
      "repetitions, alternating\n",
      rounds, repetitions);
  std::fflush(stdout);
  for (int round = 0; round < rounds; ++round) {
    for (int nodes : {2, kEveryNodeCount}) {
      if (!iso::bench::collect(
              absl::StrFormat("'%s/isorun' -n %d -- '%s' --worker%s", bin, nodes, self, flags),
              ours)) {
        std::fprintf(stderr, "atomic-bench: our measurement on %d nodes failed\n", nodes);
        return 1;
      }
      if (have_peer) iso::bench::collect_shmem_peer(bin, quick, peer, nodes);
    }
  }
  if (!have_peer) std::printf("(no OpenSHMEM peer built: ours only)\n");
  using iso::bench::summarize;
  std::printf("\n2 processes, node 0 increments: microseconds per increment, median [min-max]\n");
  iso::bench::print_header("iso", "shmem_atomic_fetch_add");
  iso::bench::print_row("fetch_add, remote copy", summarize(ours["fetch_add_remote_us"]),
                        summarize(peer["shmem_atomic_fadd_us"]));
  iso::bench::print_row("fetch_add, every copy", summarize(ours["fetch_add_everywhere_us"]),
                        summarize(peer["shmem_atomic_fadd_us"]));
  iso::bench::print_row("read + sched / assign", summarize(ours["sched_assign_us"]),
                        summarize(peer["shmem_atomic_fadd_us"]));
  const std::string n = std::to_string(kEveryNodeCount);
  std::printf(
      "\n%s processes, every node increments: microseconds per increment of node 0, median "
      "[min-max]\n",
      n.c_str());
  iso::bench::print_header("iso", "shmem_atomic_fetch_add");
  iso::bench::print_row("fetch_add", summarize(ours["all_fetch_add_us/" + n]),
                        summarize(peer["shmem_atomic_fadd_all_us/" + n]));
  iso::bench::print_row("read + sched / assign", summarize(ours["all_sched_assign_us/" + n]),
                        summarize(peer["shmem_atomic_fadd_all_us/" + n]));
  return 0;
}
