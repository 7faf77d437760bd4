// atomic-bench: atomic operations through isochrons, beside OpenSHMEM measured in the same
// run: node 0 (PE 0) measures while the others serve (wait), on 2 processes, one to a core,
// and on 4 processes, two to a core. Every node's process is pinned to core id % cores, as
// oshrun binds the peer's PEs (run_shmem_peer.sh).
//
// A shared counter, against shmem_atomic_fetch_add on PE 1:
//   fetch_add, remote copy:   the counter's only copy is on node 1; one isochron with
//                             iso.fetch_add, the old value back from that copy.
//   fetch_add, every copy:    a copy on every node; the answer comes from this node's copy
//                             once the isochron has executed here.
//   read + sched / assign:    the idiom without read-modify-writes: an isochron that reads
//                             and reserves the counter, then one that assigns the new value.
// Four variables, variable i's only copy on node i % nodes (on 4 nodes, one on each), made
// atomic the OpenSHMEM way under one lock (shmem_peer.c keeps its variable i on PE i % PEs):
//   4 vars: fetch_add:        one isochron of 4 fetch_adds, every old value awaited;
//   4 vars: read+sched/assign: one isochron reads and reserves the 4, one assigns them;
//                             both against set_lock + 4 fetch-adds + quiet + clear_lock.
//   4 vars: write, streamed:  isochrons of 4 blind writes back to back (node.poll() after
//                             each, node.quiesce() once at the end): an isochron is atomic
//                             when issued, so nothing waits for it;
//   4 vars: write + quiesce:  the same, each isochron followed by node.quiesce() (executed
//                             everywhere), what a quiet waits for;
//                             both against set_lock + 4 puts + quiet + clear_lock.
// Then every node updates at once, the same number of times, as a counter or a reservation
// that every process updates is used; node 0 times its own updates:
//   counter, every node: fetch_add / read+sched / assign, of one counter on node 1,
//                             against shmem_atomic_fetch_add on PE 1 by every PE at once;
//   4 vars, every node:  the same of the four variables at once (variable i on node
//                             i % nodes), against set_lock + 4 fetch-adds + quiet +
//                             clear_lock by every PE at once.
//
//   build/bin/atomic-bench            # drives: isorun -n 2 and -n 4, oshrun for the peer
//   build/bin/atomic-bench --quick    # fewer repetitions
#include <sched.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "iso/iso.hpp"
#include "tools/bench/iso_bench_common.hpp"

namespace {

using clock_type = std::chrono::steady_clock;
using quad = std::array<iso::shared_var<std::int64_t>, 4>;

double micros(clock_type::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

// Mean microseconds of one operation by `op`, over `iterations`.
template <typename F>
double mean_us(int iterations, F&& op) {
  const auto start = clock_type::now();
  for (int i = 0; i < iterations; ++i) op();
  return micros(clock_type::now() - start) / iterations;
}

// This process on core id % cores, the placement oshrun gives the peer's PEs.
void pin(iso::node_id id) {
  const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(id % cores, &set);
  (void)::sched_setaffinity(0, sizeof(set), &set);
}

quad allocate_quad(iso::node& node) {
  quad q;
  for (std::uint32_t i = 0; i < q.size(); ++i) {
    q[i] = node.allocate<std::int64_t>(1, iso::placement::on(i % node.count()))[0];
  }
  return q;
}

// Every node increments each of `vars` (together, in one isochron) `iterations` times per
// repetition, by fetch_adds and then by read + sched / assign; node 0 prints its mean per
// update as `<name>_fetch_add_us` and `<name>_sched_assign_us`. The values one isochron
// fetches must be equal (it is atomic), those one node fetches must rise, and every
// variable must end at every node's updates.
void every_node_updates(iso::node& node, std::span<const iso::shared_var<std::int64_t>> vars,
                        const char* name, int repetitions, int iterations) {
  std::int64_t previous = -1;
  std::int64_t wrong = 0;
  std::vector<iso::value<std::int64_t>> old(vars.size());
  const auto check = [&] {
    for (const iso::value<std::int64_t>& o : old) wrong += o.get() != old.front().get();
    wrong += old.front().get() <= previous;
    previous = old.front().get();
  };
  for (int rep = 0; rep < repetitions; ++rep) {
    node.barrier();
    const double fetch_add = mean_us(iterations, [&] {
      iso::isochron iso(node);
      for (std::size_t v = 0; v < vars.size(); ++v) old[v] = iso.fetch_add(vars[v], 1);
      iso.end();
      check();
    });
    node.barrier();
    const double sched_assign = mean_us(iterations, [&] {
      {
        iso::isochron iso(node);
        for (std::size_t v = 0; v < vars.size(); ++v) {
          old[v] = iso.read(vars[v]);
          iso.sched(vars[v]);
        }
      }
      iso::isochron iso(node);
      for (std::size_t v = 0; v < vars.size(); ++v) iso.assign(vars[v], old[v].get() + 1);
      check();
    });
    if (node.id() == 0) {
      std::printf("%s_fetch_add_us %.4f\n%s_sched_assign_us %.4f\n", name, fetch_add, name,
                  sched_assign);
      std::fflush(stdout);
    }
  }
  node.barrier();
  iso::isochron look(node);
  for (std::size_t v = 0; v < vars.size(); ++v) old[v] = look.read(vars[v]);
  look.end();
  for (const iso::value<std::int64_t>& last : old) {
    wrong += last.get() != std::int64_t{2} * node.count() * repetitions * iterations;
  }
  if (wrong != 0) {
    std::fprintf(stderr, "atomic-bench: node %u saw %lld wrong values of %s\n", node.id(),
                 static_cast<long long>(wrong), name);
    std::exit(1);
  }
}

// The figures of every node updating at once: a counter on node 1, then four variables.
struct updated_by_all {
  explicit updated_by_all(iso::node& node)
      : counter(node.allocate<std::int64_t>(1, iso::placement::on(1))[0]),
        four(allocate_quad(node)) {}
  iso::shared_var<std::int64_t> counter;
  quad four;
};

void every_node(iso::node& node, const updated_by_all& vars, int repetitions, int iterations) {
  every_node_updates(node, std::span(&vars.counter, 1), "all", repetitions, iterations);
  every_node_updates(node, vars.four, "all4", repetitions, iterations);
}

void worker(iso::node& node, int repetitions, int iterations) {
  pin(node.id());
  auto remote = node.allocate<std::int64_t>(1, iso::placement::on(1))[0];
  auto everywhere = node.allocate<std::int64_t>(1, iso::placement::everywhere())[0];
  const quad counters = allocate_quad(node);
  const quad written = allocate_quad(node);
  // A copy on every node: every server reads it locally.
  auto done = node.allocate<std::int64_t>(1, iso::placement::everywhere())[0];
  const updated_by_all by_all(node);
  node.barrier();
  if (node.id() != 0) {
    iso::bench::serve_until(node, done);
    node.barrier();
    every_node(node, by_all, repetitions, iterations);
    return;
  }
  std::int64_t expected = 0;       // the next old value of `remote`
  std::int64_t quad_expected = 0;  // the next old value of each of `counters`
  std::int64_t next_write = 0;
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
    const double fetch_add4 = mean_us(iterations, [&] {
      std::array<iso::value<std::int64_t>, 4> old;
      iso::isochron iso(node);
      for (std::size_t v = 0; v < old.size(); ++v) old[v] = iso.fetch_add(counters[v], 1);
      iso.end();
      for (const iso::value<std::int64_t>& o : old) wrong += o.get() != quad_expected;
      ++quad_expected;
    });
    const double sched_assign4 = mean_us(iterations, [&] {
      std::array<iso::value<std::int64_t>, 4> old;
      {
        iso::isochron iso(node);
        for (std::size_t v = 0; v < old.size(); ++v) {
          old[v] = iso.read(counters[v]);
          iso.sched(counters[v]);
        }
      }
      iso::isochron iso(node);
      for (std::size_t v = 0; v < old.size(); ++v) {
        wrong += old[v].get() != quad_expected;
        iso.assign(counters[v], old[v].get() + 1);
      }
      ++quad_expected;
    });
    const auto write4 = [&] {
      iso::isochron iso(node);
      for (const iso::shared_var<std::int64_t>& w : written) iso.write(w, next_write);
      iso.end();
      ++next_write;
    };
    const auto start = clock_type::now();
    for (int i = 0; i < iterations; ++i) {
      write4();
      node.poll();
    }
    node.quiesce();
    const double write4_stream = micros(clock_type::now() - start) / iterations;
    const double write4_quiesce = mean_us(iterations, [&] {
      write4();
      node.quiesce();
    });
    std::printf(
        "fetch_add_remote_us %.4f\nfetch_add_everywhere_us %.4f\nsched_assign_us %.4f\n"
        "fetch_add4_us %.4f\nsched_assign4_us %.4f\nwrite4_stream_us %.4f\n"
        "write4_quiesce_us %.4f\n",
        fetch_add_remote, fetch_add_everywhere, sched_assign, fetch_add4, sched_assign4,
        write4_stream, write4_quiesce);
    std::fflush(stdout);
  }
  // The last writes are everywhere now (quiesce): each variable holds the last value.
  iso::isochron look(node);
  std::array<iso::value<std::int64_t>, 4> last;
  for (std::size_t v = 0; v < last.size(); ++v) last[v] = look.read(written[v]);
  look.end();
  for (const iso::value<std::int64_t>& l : last) wrong += l.get() != next_write - 1;
  if (wrong != 0) {
    std::fprintf(stderr, "atomic-bench: %lld operations returned or left a wrong value\n",
                 static_cast<long long>(wrong));
    std::exit(1);
  }
  iso::bench::set_done(node, done);
  node.barrier();
  every_node(node, by_all, repetitions, iterations);
}

void print_table(int processes, iso::bench::sample_table& ours, iso::bench::sample_table& peer) {
  using iso::bench::summarize;
  std::printf("\n%d processes, %s: microseconds per operation, median [min-max]\n", processes,
              processes == 2 ? "one to a core" : "two to a core");
  iso::bench::print_header("iso", "OpenSHMEM");
  const std::optional<iso::bench::summary> fadd = summarize(peer["shmem_atomic_fadd_us"]);
  const std::optional<iso::bench::summary> fadd4 = summarize(peer["shmem_lock_fadd4_us"]);
  const std::optional<iso::bench::summary> put4 = summarize(peer["shmem_lock_put4_us"]);
  iso::bench::print_row("counter: fetch_add, remote copy", summarize(ours["fetch_add_remote_us"]),
                        fadd);
  iso::bench::print_row("counter: fetch_add, every copy",
                        summarize(ours["fetch_add_everywhere_us"]), fadd);
  iso::bench::print_row("counter: read+sched / assign", summarize(ours["sched_assign_us"]), fadd);
  iso::bench::print_row("4 vars: fetch_add", summarize(ours["fetch_add4_us"]), fadd4);
  iso::bench::print_row("4 vars: read+sched / assign", summarize(ours["sched_assign4_us"]), fadd4);
  iso::bench::print_row("4 vars: write, streamed", summarize(ours["write4_stream_us"]), put4);
  iso::bench::print_row("4 vars: write + quiesce", summarize(ours["write4_quiesce_us"]), put4);
  const std::optional<iso::bench::summary> fadd_all = summarize(peer["shmem_atomic_fadd_all_us"]);
  iso::bench::print_row("counter, every node: fetch_add", summarize(ours["all_fetch_add_us"]),
                        fadd_all);
  iso::bench::print_row("counter, every node: read+sched", summarize(ours["all_sched_assign_us"]),
                        fadd_all);
  const std::optional<iso::bench::summary> fadd4_all = summarize(peer["shmem_lock_fadd4_all_us"]);
  iso::bench::print_row("4 vars, every node: fetch_add", summarize(ours["all4_fetch_add_us"]),
                        fadd4_all);
  iso::bench::print_row("4 vars, every node: read+sched", summarize(ours["all4_sched_assign_us"]),
                        fadd4_all);
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<iso::bench::bench_args> args =
      iso::bench::parse_bench_args(argc, argv, "atomic-bench", false);
  if (!args) return 2;
  const bool quick = args->quick;
  const int repetitions = quick ? 3 : 9;
  if (args->as_worker) {
    iso::options opts;
    opts.nic = args->mode;
    return iso::run(argc, argv, opts, [&](iso::node& node) {
      // With more nodes than cores an operation that waits for another node costs tens of
      // microseconds (issue 19): fewer iterations keep a repetition near a second.
      const bool shared_cores = node.count() > std::thread::hardware_concurrency();
      const int iterations = (quick ? 1000 : 10000) / (shared_cores ? 10 : 1);
      worker(node, repetitions, iterations);
    });
  }

  const std::string bin = iso::bench::program_directory();
  const std::string self = bin + "/atomic-bench";
  const std::string flags =
      std::string(quick ? " --quick" : "") + (args->nic.empty() ? "" : " --nic " + args->nic);
  const bool have_peer = iso::bench::shmem_peer_built(bin);
  const int rounds = quick ? 1 : 3;
  std::printf(
      "atomic-bench: node 0 measures, the others serve (then every node updates at once, "
      "node 0 measuring its own); 2 and 4 processes (shm), %d rounds x %d repetitions, iso "
      "and OpenSHMEM alternating\n"
      "OpenSHMEM: counter: shmem_atomic_fetch_add on PE 1; 4 vars: set_lock + 4 fetch-adds (or "
      "puts) + quiet + clear_lock, variable i on PE i %% PEs\n",
      rounds, repetitions);
  std::fflush(stdout);
  constexpr std::array<int, 2> kProcesses = {2, 4};
  std::array<iso::bench::sample_table, 2> ours, peer;
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t c = 0; c < kProcesses.size(); ++c) {
      if (!iso::bench::collect(absl::StrFormat("'%s/isorun' -n %d -- '%s' --worker%s", bin,
                                               kProcesses[c], self, flags),
                               ours[c])) {
        std::fprintf(stderr, "atomic-bench: our measurement on %d processes failed\n",
                     kProcesses[c]);
        return 1;
      }
      if (have_peer) iso::bench::collect_shmem_peer(bin, quick, peer[c], kProcesses[c]);
    }
  }
  if (!have_peer) std::printf("(no OpenSHMEM peer built: ours only)\n");
  for (std::size_t c = 0; c < kProcesses.size(); ++c) print_table(kProcesses[c], ours[c], peer[c]);
  return 0;
}
