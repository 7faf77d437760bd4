// atomic-bench: a shared counter incremented through isochrons, beside OpenSHMEM's
// shmem_atomic_fetch_add measured in the same run (2 processes, node 0 increments while the
// other serves, as the OpenSHMEM peer's PE 0 does against PE 1).
//   fetch_add, remote copy:   the counter's only copy is on the other node; one isochron
//                             with iso.fetch_add, the old value back from that copy.
//   fetch_add, every copy:    a copy on every node; the answer comes from this node's copy
//                             once the isochron has executed here.
//   read + sched / assign:    the idiom without read-modify-writes: an isochron that reads
//                             and reserves the counter, then one that assigns the new value.
//
//   build/bin/atomic-bench            # drives: isorun -n 2 for ours, oshrun for the peer
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
    return iso::run(argc, argv, opts,
                    [&](iso::node& node) { worker(node, repetitions, iterations); });
  }

  const std::string bin = iso::bench::program_directory();
  const std::string self = bin + "/atomic-bench";
  const std::string flags =
      std::string(quick ? " --quick" : "") + (args->nic.empty() ? "" : " --nic " + args->nic);
  iso::bench::sample_table ours, peer;
  const bool have_peer = iso::bench::shmem_peer_built(bin);
  const int rounds = quick ? 1 : 3;
  std::printf("atomic-bench: a shared counter, 2 processes (shm), %d rounds x %d repetitions\n",
              rounds, repetitions);
  std::fflush(stdout);
  for (int round = 0; round < rounds; ++round) {
    if (!iso::bench::collect(
            absl::StrFormat("'%s/isorun' -n 2 -- '%s' --worker%s", bin, self, flags), ours)) {
      std::fprintf(stderr, "atomic-bench: our measurement failed\n");
      return 1;
    }
    if (have_peer) iso::bench::collect_shmem_peer(bin, quick, peer);
  }
  if (!have_peer) std::printf("(no OpenSHMEM peer built: ours only)\n");
  using iso::bench::summarize;
  std::printf("\nmicroseconds per increment: median [min-max]\n");
  iso::bench::print_header("iso", "shmem_atomic_fetch_add");
  iso::bench::print_row("fetch_add, remote copy", summarize(ours["fetch_add_remote_us"]),
                        summarize(peer["shmem_atomic_fadd_us"]));
  iso::bench::print_row("fetch_add, every copy", summarize(ours["fetch_add_everywhere_us"]),
                        summarize(peer["shmem_atomic_fadd_us"]));
  iso::bench::print_row("read + sched / assign", summarize(ours["sched_assign_us"]),
                        summarize(peer["shmem_atomic_fadd_us"]));
  return 0;
}
