// obj-bench: shared-object operations (iso/object.hpp) on 2 processes (one to a core) and
// 4 (two to a core), node 0 measuring while the others serve, beside OpenSHMEM measured in
// the same run (PE 1 the target):
//   read op, local replica:    Int.value() on a replicated object (no communication);
//   read op, single copy (RPC): Int.value() on node 1's single copy, against shmem_g on PE 1;
//   inc(), single copy (RPC):   Int.inc(1) on node 1's single copy, against
//                               shmem_atomic_fetch_add on PE 1;
//   inc(), replicated:          Int.inc(1) on a replicated object: through the sequencer
//                               order to every replica, the caller resuming once its own
//                               replica applied it; against shmem_atomic_fetch_add.
//
//   build/bin/obj-bench            # drives: isorun -n 2 and -n 4, oshrun for the peer
//   build/bin/obj-bench --quick    # fewer repetitions
#include <sched.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "absl/strings/str_format.h"
#include "iso/iso.hpp"
#include "tools/bench/iso_bench_common.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

constexpr iso::operation_id kInc = 0;
constexpr iso::operation_id kValue = 1;
constexpr iso::operation_id kAwait = 2;

iso::object_type int_type() {
  using guard = bool (*)(const std::int64_t&, std::int64_t);
  using body = std::int64_t (*)(const std::int64_t&, std::int64_t);
  iso::typed_object<std::int64_t> t("Int");
  t.write(kInc, "inc", [](std::int64_t& v, std::int64_t by) { return v += by; })
      .read(kValue, "value", [](const std::int64_t& v) { return v; })
      .read(kAwait, "await",
            std::vector<std::pair<guard, body>>{
                {[](const std::int64_t& v, std::int64_t want) { return v >= want; },
                 [](const std::int64_t& v, std::int64_t) { return v; }}});
  return t.type();
}

// Mean microseconds of one operation by `op`, over `iterations`.
template <typename F>
double mean_us(int iterations, F&& op) {
  const auto start = clock_type::now();
  for (int i = 0; i < iterations; ++i) op();
  return std::chrono::duration<double, std::micro>(clock_type::now() - start).count() / iterations;
}

void pin(iso::node_id id) {
  const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(id % cores, &set);
  (void)::sched_setaffinity(0, sizeof(set), &set);
}

void worker(iso::node& node, int repetitions, int iterations) {
  pin(node.id());
  const iso::object_type type = int_type();
  iso::object replica(node, type, {.placement = iso::object_placement::replicated});
  iso::object remote(node, type, {.placement = iso::object_placement::single_copy, .owner = 1});
  iso::object done(node, type, {.placement = iso::object_placement::replicated});
  if (node.id() != 0) {
    // Waiting for the guard serves node 0's requests and applies the ordered writes.
    done.read<std::int64_t>(kAwait, std::int64_t{1});
    node.barrier();
    return;
  }
  std::int64_t wrong = 0;
  std::int64_t remote_expected = 0;
  std::int64_t replica_expected = 0;
  for (int rep = 0; rep < repetitions; ++rep) {
    std::int64_t sink = 0;
    const double local_read =
        mean_us(iterations * 10, [&] { sink += replica.read<std::int64_t>(kValue); });
    const double rpc_read = mean_us(iterations, [&] { sink += remote.read<std::int64_t>(kValue); });
    const double rpc_inc = mean_us(iterations, [&] {
      wrong += remote.call<std::int64_t>(kInc, std::int64_t{1}) != ++remote_expected;
    });
    const double replicated_inc = mean_us(iterations, [&] {
      wrong += replica.call<std::int64_t>(kInc, std::int64_t{1}) != ++replica_expected;
    });
    if (sink < 0) ++wrong;
    std::printf(
        "obj_local_read_us %.5f\nobj_rpc_read_us %.4f\nobj_rpc_inc_us %.4f\n"
        "obj_replicated_inc_us %.4f\n",
        local_read, rpc_read, rpc_inc, replicated_inc);
    std::fflush(stdout);
  }
  if (wrong != 0) {
    std::fprintf(stderr, "obj-bench: %lld operations returned a wrong value\n",
                 static_cast<long long>(wrong));
    std::exit(1);
  }
  done.call<std::int64_t>(kInc, std::int64_t{1});
  node.barrier();
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<iso::bench::bench_args> args =
      iso::bench::parse_bench_args(argc, argv, "obj-bench", false);
  if (!args) return 2;
  const bool quick = args->quick;
  const int repetitions = quick ? 3 : 9;
  if (args->as_worker) {
    iso::options opts;
    opts.nic = args->mode;
    return iso::run(argc, argv, opts,
                    [&](iso::node& node) { worker(node, repetitions, quick ? 1000 : 10000); });
  }
  const std::string bin = iso::bench::program_directory();
  const std::string self = bin + "/obj-bench";
  const std::string flags =
      std::string(quick ? " --quick" : "") + (args->nic.empty() ? "" : " --nic " + args->nic);
  const bool have_peer = iso::bench::shmem_peer_built(bin);
  const int rounds = quick ? 1 : 3;
  std::printf(
      "obj-bench: node 0 measures, the others serve; 2 and 4 processes (shm), %d rounds x %d "
      "repetitions, iso and OpenSHMEM alternating\n",
      rounds, repetitions);
  std::fflush(stdout);
  constexpr std::array<int, 2> kProcesses = {2, 4};
  std::array<iso::bench::sample_table, 2> ours, peer;
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t c = 0; c < kProcesses.size(); ++c) {
      if (!iso::bench::collect(absl::StrFormat("'%s/isorun' -n %d -- '%s' --worker%s", bin,
                                               kProcesses[c], self, flags),
                               ours[c])) {
        std::fprintf(stderr, "obj-bench: our measurement on %d processes failed\n", kProcesses[c]);
        return 1;
      }
      if (have_peer) iso::bench::collect_shmem_peer(bin, quick, peer[c], kProcesses[c]);
    }
  }
  if (!have_peer) std::printf("(no OpenSHMEM peer built: ours only)\n");
  using iso::bench::summarize;
  for (std::size_t c = 0; c < kProcesses.size(); ++c) {
    std::printf("\n%d processes, %s: microseconds per operation, median [min-max]\n", kProcesses[c],
                kProcesses[c] == 2 ? "one to a core" : "two to a core");
    iso::bench::print_header("iso", "OpenSHMEM");
    const std::optional<iso::bench::summary> get = summarize(peer[c]["shmem_g_us"]);
    const std::optional<iso::bench::summary> fadd = summarize(peer[c]["shmem_atomic_fadd_us"]);
    iso::bench::print_row("read op, local replica", summarize(ours[c]["obj_local_read_us"]),
                          std::nullopt);
    iso::bench::print_row("read op, single copy (RPC) / g", summarize(ours[c]["obj_rpc_read_us"]),
                          get);
    iso::bench::print_row("inc(), single copy (RPC) / fadd", summarize(ours[c]["obj_rpc_inc_us"]),
                          fadd);
    iso::bench::print_row("inc(), replicated / fadd", summarize(ours[c]["obj_replicated_inc_us"]),
                          fadd);
  }
  return 0;
}
