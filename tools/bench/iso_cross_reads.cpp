// iso-cross-reads: the symmetric pattern where same-host reads once made programs slower
// than the NIC path. Node 0 holds x, node 1 holds y; each iteration, each node writes its
// own variable and reads the other's. The job runs with same-host reads on and off,
// alternately, and the table gives the time per iteration of each, their ratio, and how many
// reads took each path (a read must never be slower with the optimisation than without it).
//
//   build/bin/iso-cross-reads [--quick] [--nic thread|inline|auto]
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "iso/iso.hpp"
#include "tools/bench/iso_bench_common.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

void worker(iso::node& node, int iterations) {
  if (node.count() != 2) throw iso::error(iso::error_code::invalid_argument, "needs 2 nodes");
  const iso::shared_var<std::int64_t> x = node.allocate<std::int64_t>(1, iso::placement::on(0))[0];
  const iso::shared_var<std::int64_t> y = node.allocate<std::int64_t>(1, iso::placement::on(1))[0];
  const iso::shared_var<std::int64_t> mine = node.id() == 0 ? x : y;
  const iso::shared_var<std::int64_t> theirs = node.id() == 0 ? y : x;
  node.barrier();
  const std::uint64_t direct_before = node.status().direct_reads;
  const auto start = clock_type::now();
  std::int64_t seen = 0;
  for (int i = 1; i <= iterations; ++i) {
    {
      iso::isochron iso(node);
      iso.write(mine, i);
    }
    iso::value<std::int64_t> v;
    {
      iso::isochron iso(node);
      v = iso.read(theirs);
    }
    seen = v.get();
  }
  const double us = std::chrono::duration<double, std::micro>(clock_type::now() - start).count();
  const std::uint64_t direct = node.status().direct_reads - direct_before;
  node.barrier();
  if (seen < 0 || seen > iterations) {
    throw iso::error(iso::error_code::internal, absl::StrFormat("read %d", seen));
  }
  std::printf("iteration_us_node%u %.4f\ndirect_share_node%u %.4f\n", node.id(), us / iterations,
              node.id(), static_cast<double>(direct) / iterations);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<iso::bench::bench_args> parsed =
      iso::bench::parse_bench_args(argc, argv, "iso-cross-reads", false);
  if (!parsed) return 2;
  const iso::bench::bench_args& cfg = *parsed;
  const int iterations = cfg.quick ? 500 : 2000;
  if (cfg.as_worker) {
    iso::options opts;
    opts.nic = cfg.mode;
    return iso::run(argc, argv, opts, [&](iso::node& node) { worker(node, iterations); });
  }
  const std::string bin = iso::bench::program_directory();
  const int rounds = cfg.quick ? 3 : 9;
  std::printf(
      "iso-cross-reads: 2 nodes, each writes its own variable and reads the other's, "
      "%d iterations, %d rounds per mode, alternating\n",
      iterations, rounds);
  std::fflush(stdout);
  iso::bench::sample_table direct, nic;
  for (int round = 0; round < rounds; ++round) {
    for (const bool on : {true, false}) {
      const std::string command = absl::StrFormat(
          "ISO_DIRECT_READS=%d '%s/isorun' -n 2 -- '%s/iso-cross-reads' --worker%s%s%s", on ? 1 : 0,
          bin, bin, cfg.quick ? " --quick" : "", cfg.nic.empty() ? "" : " --nic ", cfg.nic);
      if (!iso::bench::collect(command, on ? direct : nic)) {
        std::fprintf(stderr, "iso-cross-reads: the run with same-host reads %s failed\n",
                     on ? "on" : "off");
        return 1;
      }
    }
  }
  using iso::bench::summarize;
  std::printf("\nus per iteration, median [min-max] over rounds\n");
  iso::bench::print_header("same-host reads on", "off (NIC path)");
  for (int n = 0; n < 2; ++n) {
    const std::string key = absl::StrFormat("iteration_us_node%d", n);
    iso::bench::print_row(absl::StrFormat("node %d", n), summarize(direct[key]),
                          summarize(nic[key]));
  }
  for (int n = 0; n < 2; ++n) {
    std::printf(
        "node %d: share of reads served from the other node's window: %s\n", n,
        iso::bench::cell(summarize(direct[absl::StrFormat("direct_share_node%d", n)]), "%.3f")
            .c_str());
  }
  return 0;
}
