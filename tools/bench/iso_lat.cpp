// iso-lat: latency of isochrons with one read.
//   remote: the variable's only copy is on the last node (2 nodes by default, --nodes N
//           for more; the others only serve). By default the read is served from that
//           node's memory window (a same-host read, docs/same-host-reads.md); the "NIC
//           path" row runs the job again with ISO_DIRECT_READS=0, where the read travels
//           there, executes at the isochron's logical time and the value comes back.
//           Broken down into issue (building and issuing the isochron) and wait (until
//           the value is here), in a second loop that reads the clock around each part.
//   local:  the variable's copy is on this node: a purely local isochron.
// Beside them, OpenSHMEM's shmem_g (a remote 8-byte read) measured in the same run.
//
//   build/bin/iso-lat            # drives: isorun -n 2 for ours, oshrun for the peer
//   build/bin/iso-lat --quick    # fewer repetitions (for tests)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "iso/iso.hpp"
#include "tools/bench/iso_bench_common.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

double micros(clock_type::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

// Mean microseconds of an isochron that reads `var` alone, over `iterations` of them.
double mean_read_us(iso::node& node, iso::shared_var<std::int64_t> var, int iterations) {
  const auto start = clock_type::now();
  for (int i = 0; i < iterations; ++i) {
    iso::isochron iso(node);
    iso::value<std::int64_t> v = iso.read(var);
    iso.end();
    (void)v.get();
  }
  return micros(clock_type::now() - start) / iterations;
}

void worker(iso::node& node, int repetitions, int iterations) {
  const iso::node_id last = node.count() - 1;
  auto remote = node.allocate<std::int64_t>(1, iso::placement::on(last))[0];
  auto local = node.allocate<std::int64_t>(1, iso::placement::on(0))[0];
  // Each serving node's "done" flag lives with it, so checking it is a local isochron.
  std::vector<iso::shared_var<std::int64_t>> done;
  for (iso::node_id n = 1; n < node.count(); ++n) {
    done.push_back(node.allocate<std::int64_t>(1, iso::placement::on(n))[0]);
  }
  node.barrier();
  if (node.id() != 0) {
    iso::bench::serve_until(node, done[node.id() - 1]);
  } else {
    for (int rep = 0; rep < repetitions; ++rep) {
      // The total comes from a loop of its own: the breakdown's clock readings (three per
      // isochron, each about as long as a local read) would inflate it.
      const double total = mean_read_us(node, remote, iterations);
      clock_type::duration issue{}, wait{};
      for (int i = 0; i < iterations; ++i) {
        const auto t0 = clock_type::now();
        iso::isochron iso(node);
        iso::value<std::int64_t> v = iso.read(remote);
        iso.end();
        const auto t1 = clock_type::now();
        (void)v.get();
        const auto t2 = clock_type::now();
        issue += t1 - t0;
        wait += t2 - t1;
      }
      const double local_total = mean_read_us(node, local, iterations);
      std::printf(
          "remote_total_us %.4f\nremote_issue_us %.4f\nremote_wait_us %.4f\n"
          "local_total_us %.4f\n",
          total, micros(issue) / iterations, micros(wait) / iterations, local_total);
      std::fflush(stdout);
    }
    for (const auto& flag : done) iso::bench::set_done(node, flag);
  }
  node.barrier();
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<iso::bench::bench_args> args =
      iso::bench::parse_bench_args(argc, argv, "iso-lat", true);
  if (!args) return 2;
  const bool quick = args->quick;
  const int repetitions = quick ? 3 : 9;
  const int iterations = quick ? 2000 : 20000;
  if (args->as_worker) {
    iso::options opts;
    opts.nic = args->mode;
    return iso::run(argc, argv, opts,
                    [&](iso::node& node) { worker(node, repetitions, iterations); });
  }

  const std::string bin = iso::bench::program_directory();
  const std::string self = bin + "/iso-lat";
  const std::string flags =
      std::string(quick ? " --quick" : "") + (args->nic.empty() ? "" : " --nic " + args->nic);
  iso::bench::sample_table ours, nic_path, peer;
  const bool have_peer = iso::bench::shmem_peer_built(bin);
  const int rounds = quick ? 1 : 3;
  std::printf("iso-lat: single-read isochrons, %d processes (shm), %d rounds x %d repetitions\n",
              args->nodes, rounds, repetitions);
  std::fflush(stdout);
  for (int round = 0; round < rounds; ++round) {
    if (!iso::bench::collect(
            absl::StrFormat("'%s/isorun' -n %d -- '%s' --worker%s", bin, args->nodes, self, flags),
            ours)) {
      std::fprintf(stderr, "iso-lat: our measurement failed\n");
      return 1;
    }
    if (!iso::bench::collect(
            absl::StrFormat("ISO_DIRECT_READS=0 '%s/isorun' -n %d -- '%s' --worker%s", bin,
                            args->nodes, self, flags),
            nic_path)) {
      std::fprintf(stderr, "iso-lat: our measurement (NIC path) failed\n");
      return 1;
    }
    if (have_peer) iso::bench::collect_shmem_peer(bin, quick, peer);
  }
  if (!have_peer) std::printf("(no OpenSHMEM peer built: ours only)\n");
  using iso::bench::summarize;
  std::printf("\nmicroseconds: median [min-max]\n");
  iso::bench::print_header("iso", "OpenSHMEM");
  iso::bench::print_row("remote read isochron (total)", summarize(ours["remote_total_us"]),
                        summarize(peer["shmem_g_us"]));
  iso::bench::print_row("  issue", summarize(ours["remote_issue_us"]), std::nullopt);
  iso::bench::print_row("  wait for the value", summarize(ours["remote_wait_us"]), std::nullopt);
  iso::bench::print_row("local read isochron", summarize(ours["local_total_us"]), std::nullopt);
  iso::bench::print_row("remote read, NIC path (total)", summarize(nic_path["remote_total_us"]),
                        summarize(peer["shmem_g_us"]));
  iso::bench::print_row("  issue", summarize(nic_path["remote_issue_us"]), std::nullopt);
  iso::bench::print_row("  wait for the value", summarize(nic_path["remote_wait_us"]),
                        std::nullopt);
  return 0;
}
