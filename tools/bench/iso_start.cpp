// iso-start: how fast a job starts, and whether it runs at full speed from its first
// isochron, on 2 processes (shm), beside Open MPI starting a trivial program.
//
// Start-up, from the driver's launch (just before it hands the command to the shell) to:
//   body_us       the body of iso::run() starting on node 0: the node is built;
//   first_iso_us  node 0's first isochron (one write to a copy on node 1) executed there:
//                 node.quiesce() returned after it;
//   job_us        the job ended (isorun exited), as the driver sees it.
// The Open MPI peer (iso-start-mpi, run by mpirun -n 2) prints the same moments of a program
// that does MPI_Init and one MPI_Barrier: mpi_init_us (MPI_Init returned on rank 0),
// mpi_first_us (the barrier returned on rank 0) and mpi_job_us.
//
// Cold start: node 0 then issues blocks of 10,000 single-write isochrons to a copy on node 1,
// polling once after each (iso-pulse's stream) and calling node.quiesce() at the end of each
// block, while node 1 serves. Per block: microseconds per isochron and the minor page faults
// of node 0's process (getrusage: host and NIC thread together). Figures:
//   first_10k_us   block 0, the first 10,000 isochrons of the job;
//   steady_us      the median of the last 4 blocks, by when the queues have wrapped;
//   cold_ratio     first_10k_us / steady_us (the goal: at most 1.2);
//   faults_first_10k, faults_steady (per block), faults_startup (launch to first isochron,
//   the process's whole count then), and node 1's faults while serving every block.
// The faults show where the time goes: every first touch of a page of the host<->NIC queues,
// the rings or the windows costs a trap (about 10 us on a VM).
//
//   build/bin/iso-start                   # 5 rounds, iso and Open MPI alternating
//   build/bin/iso-start --quick           # 1 round, 8 blocks
//   build/bin/iso-start --nic thread      # the NIC mode (thread|inline|auto; default auto)
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "iso/iso.hpp"
#include "tools/bench/iso_bench_common.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

// The driver's launch time, in steady_clock nanoseconds (CLOCK_MONOTONIC: one clock for
// every process of the host).
constexpr const char* kLaunchVariable = "ISO_START_LAUNCH_NS";
constexpr int kBlockIsochrons = 10000;
constexpr int kSteadyBlocks = 4;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(clock_type::now().time_since_epoch())
      .count();
}

std::optional<std::int64_t> launch_ns() {
  const char* text = std::getenv(kLaunchVariable);
  if (text == nullptr) return std::nullopt;
  return std::strtoll(text, nullptr, 10);
}

long minor_faults() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

void print_since_launch(const char* key, std::int64_t at_ns) {
  if (const std::optional<std::int64_t> launch = launch_ns()) {
    std::printf("%s %.1f\n", key, static_cast<double>(at_ns - *launch) / 1e3);
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void worker(iso::node& node, int blocks) {
  const std::int64_t body_ns = now_ns();
  if (node.count() != 2) throw iso::error(iso::error_code::invalid_argument, "needs 2 nodes");
  auto target = node.allocate<std::int64_t>(1, iso::placement::on(1))[0];
  auto done = node.allocate<std::int64_t>(1, iso::placement::on(1))[0];
  if (node.id() == 1) {
    const long before = minor_faults();
    iso::bench::serve_until(node, done);
    std::printf("serve_faults %ld\n", minor_faults() - before);
    return;
  }
  {
    iso::isochron iso(node);
    iso.write(target, std::int64_t{-1});
    iso.end();
    node.quiesce();
  }
  const std::int64_t first_ns = now_ns();
  const long startup_faults = minor_faults();
  print_since_launch("body_us", body_ns);
  print_since_launch("first_iso_us", first_ns);
  std::printf("faults_startup %ld\n", startup_faults);

  std::vector<double> block_us;
  std::vector<long> block_faults;
  std::int64_t next = 0;
  for (int b = 0; b < blocks; ++b) {
    const long faults_before = minor_faults();
    const auto start = clock_type::now();
    for (int i = 0; i < kBlockIsochrons; ++i) {
      iso::isochron iso(node);
      iso.write(target, next++);
      iso.end();
      node.poll();
    }
    node.quiesce();
    block_us.push_back(
        std::chrono::duration<double, std::micro>(clock_type::now() - start).count() /
        kBlockIsochrons);
    block_faults.push_back(minor_faults() - faults_before);
  }
  iso::bench::set_done(node, done);
  for (int b = 0; b < blocks; ++b) {
    std::printf("block_us %d %.4f\nblock_faults %d %ld\n", b, block_us[b], b, block_faults[b]);
  }
  const std::vector<double> tail(block_us.end() - kSteadyBlocks, block_us.end());
  std::vector<double> tail_faults;
  for (auto it = block_faults.end() - kSteadyBlocks; it != block_faults.end(); ++it) {
    tail_faults.push_back(static_cast<double>(*it));
  }
  const double steady = median(tail);
  std::printf("first_10k_us %.4f\nsteady_us %.4f\ncold_ratio %.4f\n", block_us[0], steady,
              block_us[0] / steady);
  std::printf("faults_first_10k %ld\nfaults_steady %.1f\n", block_faults[0], median(tail_faults));
  std::fflush(stdout);
}

// Runs `command` with the launch time in its environment; adds its lines and job_key (the
// launch-to-exit time) to `into`.
bool timed_collect(const std::string& command, const char* job_key,
                   iso::bench::sample_table& into) {
  const std::int64_t launch = now_ns();
  const bool ok =
      iso::bench::collect_indexed(absl::StrFormat("%s=%d %s", kLaunchVariable, launch, command),
                                  {"block_us", "block_faults"}, into);
  if (ok) into[job_key].push_back(static_cast<double>(now_ns() - launch) / 1e3);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<iso::bench::bench_args> parsed =
      iso::bench::parse_bench_args(argc, argv, "iso-start", false);
  if (!parsed) return 2;
  const iso::bench::bench_args& cfg = *parsed;
  const int blocks = cfg.quick ? 8 : 16;
  if (cfg.as_worker) {
    iso::options opts;
    opts.nic = cfg.mode;
    return iso::run(argc, argv, opts, [&](iso::node& node) { worker(node, blocks); });
  }

  const std::string bin = iso::bench::program_directory();
  const std::string nic = cfg.nic.empty() ? "auto" : cfg.nic;
  const std::string ours_command =
      absl::StrFormat("'%s/isorun' -n 2 -- '%s/iso-start' --worker%s --nic %s", bin, bin,
                      cfg.quick ? " --quick" : "", nic);
  const std::optional<std::string> peer_command =
      iso::bench::mpi_peer_command(bin, "iso-start-mpi", 2);
  if (::geteuid() == 0) {
    // Open MPI refuses to start as root unless told twice that it is meant.
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  }
  const int rounds = cfg.quick ? 1 : 5;
  std::printf(
      "iso-start: start-up and the first isochrons, 2 processes (shm), nic %s,\n"
      "%d blocks of %d single-write isochrons, %d rounds, iso and Open MPI alternating\n",
      nic.c_str(), blocks, kBlockIsochrons, rounds);
  std::fflush(stdout);
  iso::bench::sample_table ours, peer;
  for (int round = 0; round < rounds; ++round) {
    if (!timed_collect(ours_command, "job_us", ours)) {
      std::fprintf(stderr, "iso-start: our measurement failed\n");
      return 1;
    }
    if (peer_command && !timed_collect(*peer_command, "mpi_job_us", peer)) {
      std::fprintf(stderr, "iso-start: the Open MPI peer failed; ours only\n");
    }
  }
  if (!peer_command)
    std::printf("(no Open MPI peer: mpirun or iso-start-mpi missing; ours only)\n");

  using iso::bench::summarize;
  std::printf("\nstart-up, microseconds from launch: median [min-max] over rounds\n");
  iso::bench::print_header("iso", "Open MPI (MPI_Init, barrier)");
  iso::bench::print_row("node built / MPI_Init returned", summarize(ours["body_us"]),
                        summarize(peer["mpi_init_us"]));
  iso::bench::print_row("first isochron / first barrier", summarize(ours["first_iso_us"]),
                        summarize(peer["mpi_first_us"]));
  iso::bench::print_row("job ended", summarize(ours["job_us"]), summarize(peer["mpi_job_us"]));

  std::printf("\nthe first isochrons: median [min-max] over rounds\n");
  iso::bench::print_header("iso", "-");
  iso::bench::print_row("first 10,000: us per isochron", summarize(ours["first_10k_us"]),
                        std::nullopt);
  iso::bench::print_row("steady: us per isochron", summarize(ours["steady_us"]), std::nullopt);
  iso::bench::print_row("first 10,000 / steady", summarize(ours["cold_ratio"]), std::nullopt);
  for (int b = 0; b < blocks; ++b) {
    iso::bench::print_row(absl::StrFormat("block %d: us per isochron", b),
                          summarize(ours[iso::bench::indexed_key("block_us", b)]), std::nullopt);
  }
  const auto count_row = [&](const std::string& label, const std::string& key) {
    std::printf("%-34s %-26s %-26s %s\n", label.c_str(),
                iso::bench::cell(summarize(ours[key]), "%.0f").c_str(), "-", "-");
  };
  count_row("page faults, launch to first iso", "faults_startup");
  count_row("page faults, first 10,000", "faults_first_10k");
  count_row("page faults, steady block", "faults_steady");
  count_row("page faults, node 1 serving all", "serve_faults");
  return 0;
}
