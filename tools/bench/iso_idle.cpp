// iso-idle: the CPU cost of an idle 2-node job, for each NIC mode.
//
// After start-up, node 0 sleeps (it neither issues nor polls: only its NIC thread, if it
// has one, can run) while node 1 waits in node.barrier() for it, which is how a node that
// has nothing to do waits for one that is busy elsewhere. A
// monitor thread in each process samples the process's CPU time (user + system, every
// thread: CLOCK_PROCESS_CPUTIME_ID) and its context switches (getrusage) from 100 ms after
// start, which leaves the runtime its spin-then-sleep grace, over a window of 2 s (0.5 s with
// --quick) that ends before node 0 wakes up. Each node prints
//   idle_cpu_percent_node<i> <CPU seconds / wall seconds * 100>
//   idle_switches_per_s_node<i> <context switches per second: how often it wakes up>
// The goal is under 5% of a core per node. There is no OpenSHMEM counterpart.
//
//   build/bin/iso-idle                    # drives: isorun -n 2, --nic thread then inline
//   build/bin/iso-idle --quick            # shorter window, one round (for tests)
//   build/bin/iso-idle --nic inline       # one NIC mode only (thread|inline|auto)
#include <sys/resource.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "iso/iso.hpp"
#include "tools/bench/iso_bench_common.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kGrace{100};
// Node 0 sleeps this much past the window's end, so that its wake-up stays out of it.
constexpr std::chrono::milliseconds kMargin{100};
constexpr double kGoalPercent = 5.0;

struct sample {
  clock_type::time_point wall;
  double cpu_s = 0;
  long switches = 0;
};

sample take_sample() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return {clock_type::now(), static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9,
          ru.ru_nvcsw + ru.ru_nivcsw};
}

void worker(iso::node& node, std::chrono::milliseconds window) {
  if (node.count() != 2) throw iso::error(iso::error_code::invalid_argument, "needs 2 nodes");
  const auto start = clock_type::now();
  sample first, last;
  // A sleeping thread costs nothing, so the monitor does not disturb what it measures.
  std::thread monitor([&] {
    std::this_thread::sleep_until(start + kGrace);
    first = take_sample();
    std::this_thread::sleep_until(start + kGrace + window);
    last = take_sample();
  });
  if (node.id() == 0) {
    // The idle period being measured, not synchronisation: node 1 waits for it in barrier().
    std::this_thread::sleep_until(start + kGrace + window + kMargin);
  } else {
    node.barrier();  // returns when node 0 reaches its barrier below
  }
  monitor.join();
  const double wall_s = std::chrono::duration<double>(last.wall - first.wall).count();
  std::printf("idle_cpu_percent_node%u %.4f\nidle_switches_per_s_node%u %.4f\n", node.id(),
              (last.cpu_s - first.cpu_s) / wall_s * 100, node.id(),
              static_cast<double>(last.switches - first.switches) / wall_s);
  std::fflush(stdout);
  if (node.id() == 0) node.barrier();
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<iso::bench::bench_args> parsed =
      iso::bench::parse_bench_args(argc, argv, "iso-idle", false);
  if (!parsed) return 2;
  const iso::bench::bench_args& cfg = *parsed;
  iso::options opts;
  opts.nic = cfg.mode;
  const std::chrono::milliseconds window{cfg.quick ? 500 : 2000};
  if (cfg.as_worker) {
    return iso::run(argc, argv, opts, [&](iso::node& node) { worker(node, window); });
  }

  const std::string bin = iso::bench::program_directory();
  const std::string self = bin + "/iso-idle";
  const std::vector<std::string> modes = cfg.nic.empty()
                                             ? std::vector<std::string>{"thread", "inline"}
                                             : std::vector<std::string>{cfg.nic};
  const int rounds = cfg.quick ? 1 : 5;
  std::printf(
      "iso-idle: CPU of an idle 2-node job (node 0 sleeps, node 1 waits in barrier),\n"
      "%lld ms window from %lld ms after start, %d rounds per NIC mode\n",
      static_cast<long long>(window.count()), static_cast<long long>(kGrace.count()), rounds);
  std::fflush(stdout);
  std::vector<iso::bench::sample_table> results(modes.size());
  for (int round = 0; round < rounds; ++round) {
    // Interleaved, so that a noisy spell of the host does not land on one NIC mode only.
    for (std::size_t p = 0; p < modes.size(); ++p) {
      if (!iso::bench::collect(absl::StrFormat("'%s/isorun' -n 2 -- '%s' --worker%s --nic %s", bin,
                                               self, cfg.quick ? " --quick" : "", modes[p]),
                               results[p])) {
        std::fprintf(stderr, "iso-idle: the measurement with --nic %s failed\n", modes[p].c_str());
        return 1;
      }
    }
  }
  using iso::bench::summarize;
  std::printf("\nmedian [min-max] over rounds; goal: under %.0f%% of a core per node\n",
              kGoalPercent);
  std::printf("%-34s %-26s %-26s %s\n", "", "CPU % of a core", "wake-ups per s", "goal");
  for (std::size_t p = 0; p < modes.size(); ++p) {
    for (int n = 0; n < 2; ++n) {
      const auto cpu = summarize(results[p][absl::StrFormat("idle_cpu_percent_node%d", n)]);
      const auto wakes = summarize(results[p][absl::StrFormat("idle_switches_per_s_node%d", n)]);
      const char* verdict = !cpu ? "-" : cpu->median < kGoalPercent ? "met" : "MISSED";
      std::printf(
          "%-34s %-26s %-26s %s\n",
          absl::StrFormat("nic %s, node %d (%s)", modes[p], n, n == 0 ? "asleep" : "in barrier")
              .c_str(),
          iso::bench::cell(cpu, "%.2f").c_str(), iso::bench::cell(wakes, "%.0f").c_str(), verdict);
    }
  }
  return 0;
}
