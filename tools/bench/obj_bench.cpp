// obj-bench: shared-object operations (iso/object.hpp) on 2, 4 and 8 processes (more
// processes than cores where the machine has fewer, said in the table), beside OpenSHMEM
// (PE 1 the target) and MPI_Bcast (obj-bench-mpi) measured in the same run:
//   read op, local replica:    Int.value() on a replicated object (no communication);
//   read op, single copy (RPC): Int.value() on node 1's single copy, against shmem_g on PE 1;
//   inc(), single copy (RPC):   Int.inc(1) on node 1's single copy, against
//                               shmem_atomic_fetch_add on PE 1;
//   inc(), replicated:          Int.inc(1) on a replicated object: through the objects
//                               order (each of sequencer and isotach) to every replica; to the
//                               caller's resume (its own replica applied it), against
//                               shmem_atomic_fetch_add and against rank 0's MPI_Bcast of the
//                               write's 32 bytes; to the last replica (every other node answers by
//                               a plain message once its replica applied it), against MPI_Bcast
//                               with the same answers; throughput with every node writing (64
//                               outstanding each; microseconds per write applied at node 0),
//                               against MPI_Bcast from each rank in turn.
// The first four are node 0's alone while the others serve; the last two involve every node.
//
//   build/bin/obj-bench            # drives: isorun -n 2, 4 and 8, oshrun and mpirun for peers
//   build/bin/obj-bench --quick    # fewer repetitions
#include <sched.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <span>
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

// The bytes a replicated inc() puts into the objects order: the write's header (object,
// operation, call: 24 bytes) and its 8-byte argument. MPI_Bcast is measured with as many.
constexpr int kReplicatedWriteBytes = 32;
// Writes each node keeps outstanding in the throughput section.
constexpr std::size_t kWindow = 64;

void worker(iso::node& node, int repetitions, int iterations) {
  pin(node.id());
  const iso::object_type type = int_type();
  const auto nodes = static_cast<std::int64_t>(node.count());
  iso::object replica(node, type, {.placement = iso::object_placement::replicated});
  iso::object remote(node, type, {.placement = iso::object_placement::single_copy, .owner = 1});
  // Sections: node 0 increments it to start the next; the others wait for it in its guard,
  // which serves node 0's requests and applies the ordered writes meanwhile.
  iso::object section(node, type, {.placement = iso::object_placement::replicated});
  iso::object fan(node, type, {.placement = iso::object_placement::replicated});
  iso::object thru(node, type, {.placement = iso::object_placement::replicated});
  const int acked_iterations = std::max(10, iterations / 10);
  std::int64_t wrong = 0;
  std::int64_t remote_expected = 0;
  std::int64_t replica_expected = 0;
  std::int64_t sections = 0;
  std::int64_t fan_value = 0;
  std::int64_t thru_value = 0;
  for (int rep = 0; rep < repetitions; ++rep) {
    // Node 0 alone; the others serve.
    if (node.id() == 0) {
      std::int64_t sink = 0;
      const double local_read =
          mean_us(iterations * 10, [&] { sink += replica.read<std::int64_t>(kValue); });
      const double rpc_read =
          mean_us(iterations, [&] { sink += remote.read<std::int64_t>(kValue); });
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
      section.call<std::int64_t>(kInc, std::int64_t{1});
    }
    section.read<std::int64_t>(kAwait, ++sections);

    // To the last replica: node 0 increments; every other node, once its replica applied
    // it, answers by a plain message; until node 0 has every answer.
    const std::byte answer{1};
    const double acked = mean_us(acked_iterations, [&] {
      ++fan_value;
      if (node.id() == 0) {
        wrong += fan.call<std::int64_t>(kInc, std::int64_t{1}) != fan_value;
        for (std::int64_t n = 1; n < nodes; ++n) (void)node.receive();
      } else {
        fan.read<std::int64_t>(kAwait, fan_value);
        node.send(0, std::span(&answer, 1));
      }
    });

    // Throughput: every node keeps kWindow writes outstanding; until node 0's replica has
    // applied every node's.
    const auto start = clock_type::now();
    std::deque<iso::pending<std::int64_t>> outstanding;
    for (int i = 0; i < iterations; ++i) {
      if (outstanding.size() == kWindow) {
        (void)outstanding.front().get();
        outstanding.pop_front();
      }
      outstanding.push_back(thru.start<std::int64_t>(kInc, std::int64_t{1}));
    }
    for (auto& w : outstanding) (void)w.get();
    thru_value += nodes * iterations;
    thru.read<std::int64_t>(kAwait, thru_value);
    const double seconds = std::chrono::duration<double>(clock_type::now() - start).count();
    if (node.id() == 0) {
      std::printf("obj_replicated_inc_acked_us %.4f\nobj_replicated_thru_us %.4f\n", acked,
                  seconds * 1e6 / static_cast<double>(nodes * iterations));
      std::fflush(stdout);
    }
  }
  if (wrong != 0) {
    std::fprintf(stderr, "obj-bench: %lld operations returned a wrong value\n",
                 static_cast<long long>(wrong));
    std::exit(1);
  }
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
  const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
  std::printf(
      "obj-bench: node 0 measures alone, then every node takes part (to the last replica, "
      "throughput); 2, 4 and 8 processes (shm) on %u cores, %d rounds x %d repetitions, iso (both "
      "objects orders), "
      "OpenSHMEM and MPI_Bcast of %d bytes alternating\n",
      cores, rounds, repetitions, kReplicatedWriteBytes);
  std::fflush(stdout);
  constexpr std::array<int, 3> kProcesses = {2, 4, 8};
  // Our samples by objects order (ISO_OBJECT_ORDER), then by process count.
  constexpr std::array<const char*, 2> kOrders = {"sequencer", "isotach"};
  std::array<std::array<iso::bench::sample_table, 3>, 2> ours;
  std::array<iso::bench::sample_table, 3> peer, mpi;
  bool have_mpi = false;
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t c = 0; c < kProcesses.size(); ++c) {
      for (std::size_t o = 0; o < kOrders.size(); ++o) {
        if (!iso::bench::collect(
                absl::StrFormat("ISO_OBJECT_ORDER=%s '%s/isorun' -n %d -- '%s' --worker%s",
                                kOrders[o], bin, kProcesses[c], self, flags),
                ours[o][c])) {
          std::fprintf(stderr, "obj-bench: our measurement on %d processes (%s order) failed\n",
                       kProcesses[c], kOrders[o]);
          return 1;
        }
      }
      if (have_peer) iso::bench::collect_shmem_peer(bin, quick, peer[c], kProcesses[c]);
      const std::optional<std::string> bcast = iso::bench::mpi_peer_command(
          bin, "obj-bench-mpi", kProcesses[c],
          absl::StrFormat(" --bytes %d%s", kReplicatedWriteBytes, quick ? " --quick" : ""));
      if (bcast) {
        have_mpi = true;
        iso::bench::collect_indexed(
            *bcast, {"mpi_bcast_root_us", "mpi_bcast_ack_us", "mpi_bcast_thru_us"}, mpi[c],
            /*tolerate_exit=*/true);
      }
    }
  }
  if (!have_peer) std::printf("(no OpenSHMEM peer built: no OpenSHMEM column)\n");
  if (!have_mpi) std::printf("(no MPI peer or mpirun: no MPI_Bcast column)\n");
  using iso::bench::indexed_key;
  using iso::bench::summarize;
  for (std::size_t c = 0; c < kProcesses.size(); ++c) {
    const int n = kProcesses[c];
    const std::string placing =
        n <= static_cast<int>(cores)
            ? std::string("one to a core")
            : absl::StrFormat("%d to a core: more processes than cores",
                              (n + static_cast<int>(cores) - 1) / static_cast<int>(cores));
    std::printf("\n%d processes, %s: microseconds per operation, median [min-max]\n", n,
                placing.c_str());
    iso::bench::print_header("iso", "OpenSHMEM");
    const std::optional<iso::bench::summary> get = summarize(peer[c]["shmem_g_us"]);
    const std::optional<iso::bench::summary> fadd = summarize(peer[c]["shmem_atomic_fadd_us"]);
    // Reads and single copies do not use the objects order: the sequencer runs give them.
    iso::bench::sample_table& plain = ours[0][c];
    iso::bench::print_row("read op, local replica", summarize(plain["obj_local_read_us"]),
                          std::nullopt);
    iso::bench::print_row("read op, single copy (RPC) / g", summarize(plain["obj_rpc_read_us"]),
                          get);
    iso::bench::print_row("inc(), single copy (RPC) / fadd", summarize(plain["obj_rpc_inc_us"]),
                          fadd);
    for (std::size_t o = 0; o < kOrders.size(); ++o) {
      iso::bench::print_row(absl::StrFormat("inc(), repl. %s / fadd", kOrders[o]),
                            summarize(ours[o][c]["obj_replicated_inc_us"]), fadd);
    }
    for (std::size_t o = 0; o < kOrders.size(); ++o) {
      iso::bench::sample_table& replicated = ours[o][c];
      std::printf(
          "replicated inc() (%s order) beside MPI_Bcast of %d bytes (throughput: every node "
          "writing, MPI every rank in turn; microseconds per write applied at node 0):\n",
          kOrders[o], kReplicatedWriteBytes);
      iso::bench::print_header("iso", "MPI_Bcast");
      iso::bench::print_row("resume / root returns", summarize(replicated["obj_replicated_inc_us"]),
                            summarize(mpi[c][indexed_key("mpi_bcast_root_us", n)]));
      iso::bench::print_row("last replica, acked / acked",
                            summarize(replicated["obj_replicated_inc_acked_us"]),
                            summarize(mpi[c][indexed_key("mpi_bcast_ack_us", n)]));
      iso::bench::print_row("throughput: us per write / bcast",
                            summarize(replicated["obj_replicated_thru_us"]),
                            summarize(mpi[c][indexed_key("mpi_bcast_thru_us", n)]));
    }
  }
  return 0;
}
