// order-bench: ordered messages (iso::ordered_group) in both orders beside MPI_Bcast, and
// the NIC services that ordered broadcast builds on beside their closest OpenSHMEM
// operations, each measured in the same run as its peer.
//
// Sections (each a function pair below; --only picks some, all run by default):
//   ordered    latency of one ordered message (64 B) to the last member, and ordered
//              messages per second with batching, for the sequencer and the isotach order
//              (both in one job), on 2, 4 and 8 nodes, beside MPI_Bcast of the same payload
//              (order-bench-mpi). Jobs above the machine's core count run inproc (one
//              process, a thread per node), oversubscribed; the table says so.
//   fetch_add  node.fetch_add on a counter held by node 1, beside shmem_atomic_fetch_add.
//              On one host that is a CPU atomic in node 1's window (iso/counter.hpp);
//              ISO_DIRECT_READS=0 (no windows) measures the NIC round trip instead.
//   put_get    node.put of 8 B to 64 KiB into node 1's window followed by node.fence(),
//              beside shmem_putmem + shmem_quiet; node.get of the same sizes, beside
//              shmem_getmem.
// fetch_add and put_get run 2 processes on this host (node 0 measures while node 1 serves,
// as the OpenSHMEM peer's PE 0 does against PE 1).
// Rounds alternate ours and the peer's; each round's worker prints one mean per repetition
// and figure, and the table shows medians [min-max] over all of them, with ours/peer.
//
//   build/bin/order-bench                       # every section
//   build/bin/order-bench --only=fetch_add      # one section (a comma list for several)
//   build/bin/order-bench --quick --nic thread  # fewer repetitions; NICs on threads
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "iso/iso.hpp"
#include "tools/bench/iso_bench_common.hpp"
#include "tools/bench/order_bench_ordered.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

struct run_config {
  int repetitions = 9;
  bool quick = false;
  // How long one repetition's loop runs (at least).
  [[nodiscard]] std::chrono::milliseconds target() const {
    return std::chrono::milliseconds(quick ? 20 : 100);
  }
};

// Mean microseconds of one `op`, over a loop of at least `min_iterations` that runs for
// `target` or longer: a fixed count would last minutes on a loaded host.
template <typename F>
double mean_us(std::chrono::milliseconds target, int min_iterations, F&& op) {
  const auto start = clock_type::now();
  int iterations = 0;
  clock_type::duration elapsed{};
  do {
    for (int i = 0; i < min_iterations; ++i) op();
    iterations += min_iterations;
    elapsed = clock_type::now() - start;
  } while (elapsed < target);
  return std::chrono::duration<double, std::micro>(elapsed).count() / iterations;
}

// Runs `measure` on node 0 while node 1 serves (polls, so that an inline NIC answers too);
// collective on both nodes.
void measure_on_node_0(iso::node& node, const std::function<void()>& measure) {
  auto done = node.allocate<std::int64_t>(1, iso::placement::on(1))[0];
  node.barrier();
  if (node.id() == 0) {
    measure();
    iso::bench::set_done(node, done);
  } else {
    iso::bench::serve_until(node, done);
  }
  node.barrier();
}

void fail(const char* what) {
  std::fprintf(stderr, "order-bench: %s\n", what);
  std::exit(1);
}

// ---- fetch_add -------------------------------------------------------------------------

void fetch_add_worker(iso::node& node, const run_config& cfg) {
  const iso::counter counter = node.allocate_counter(/*holder=*/1);
  measure_on_node_0(node, [&] {
    std::uint64_t expected = 0;
    std::uint64_t wrong = 0;
    for (int rep = 0; rep < cfg.repetitions; ++rep) {
      const double us = mean_us(cfg.target(), 16,
                                [&] { wrong += node.fetch_add(counter, 1).get() != expected++; });
      std::printf("fetch_add_us %.4f\n", us);
      std::fflush(stdout);
    }
    if (wrong != 0) fail("fetch_add returned a wrong value");
  });
}

void fetch_add_table(const iso::bench::sample_table& ours, const iso::bench::sample_table& peer) {
  using iso::bench::summarize;
  std::printf("\nfetch-and-add, microseconds per operation: median [min-max]\n");
  iso::bench::print_header("iso node.fetch_add", "shmem_atomic_fetch_add");
  auto find = [](const iso::bench::sample_table& t, const char* key) {
    auto it = t.find(key);
    return it == t.end() ? std::nullopt : summarize(it->second);
  };
  iso::bench::print_row("fetch_add, counter held by node 1", find(ours, "fetch_add_us"),
                        find(peer, "shmem_atomic_fadd_us"));
}

// ---- put_get ---------------------------------------------------------------------------

constexpr std::size_t kSizes[] = {8, 64, 512, 4096, 32768, 65536};

void put_get_worker(iso::node& node, const run_config& cfg) {
  const iso::window w = node.register_window(kSizes[std::size(kSizes) - 1]);
  std::vector<std::byte> buffer(w.size());
  measure_on_node_0(node, [&] {
    for (int rep = 0; rep < cfg.repetitions; ++rep) {
      for (const std::size_t bytes : kSizes) {
        std::uint64_t stamp = 0;
        const double put_us = mean_us(cfg.target(), 8, [&] {
          ++stamp;
          std::memcpy(buffer.data(), &stamp, sizeof(stamp));
          node.put(w, 1, 0, std::span(buffer).first(bytes));
          node.fence();
        });
        std::uint64_t seen = 0;
        const iso::remote_bytes check = node.get(w, 1, 0, sizeof(seen));
        std::memcpy(&seen, check.get().data(), sizeof(seen));
        if (seen != stamp) fail("the last put is not in the target's window after the fence");
        const double get_us = mean_us(cfg.target(), 8, [&] {
          const iso::remote_bytes got = node.get(w, 1, 0, bytes);
          if (got.get().size() != bytes) fail("a get returned a wrong size");
        });
        std::printf("put_fence_us %zu %.4f\nget_us %zu %.4f\n", bytes, put_us, bytes, get_us);
        std::fflush(stdout);
      }
    }
  });
}

void put_get_table(const iso::bench::sample_table& ours, const iso::bench::sample_table& peer) {
  using iso::bench::indexed_key;
  using iso::bench::summarize;
  auto find = [](const iso::bench::sample_table& t, const std::string& key) {
    auto it = t.find(key);
    return it == t.end() ? std::nullopt : summarize(it->second);
  };
  std::printf("\nput + fence, microseconds per operation: median [min-max]\n");
  iso::bench::print_header("iso put + fence", "shmem_putmem + quiet");
  for (const std::size_t bytes : kSizes) {
    const int b = static_cast<int>(bytes);
    iso::bench::print_row(absl::StrFormat("put %u B", bytes),
                          find(ours, indexed_key("put_fence_us", b)),
                          find(peer, indexed_key("shmem_putmem_quiet_us", b)));
  }
  std::printf("\nget, microseconds per operation: median [min-max]\n");
  iso::bench::print_header("iso get", "shmem_getmem");
  for (const std::size_t bytes : kSizes) {
    const int b = static_cast<int>(bytes);
    iso::bench::print_row(absl::StrFormat("get %u B", bytes), find(ours, indexed_key("get_us", b)),
                          find(peer, indexed_key("shmem_getmem_us", b)));
  }
}

// ---- ordered ---------------------------------------------------------------------------

constexpr int kOrderedNodes[] = {2, 4, 8};

void ordered_worker(iso::node& node, const run_config& cfg) {
  const iso::bench::ordered_config oc{.round_trips = cfg.quick ? 50 : 200,
                                      .messages = cfg.quick ? 20'000 : 200'000};
  iso::bench::ordered_section(node, oc, iso::order_kind::sequencer);
  iso::bench::ordered_section(node, oc, iso::order_kind::isotach);
}

// Whether a job of `nodes` runs inproc: above the core count, where processes would only
// take turns on the cores anyway.
bool ordered_inproc(int nodes) { return nodes > static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN)); }

const std::vector<std::string> kOrderedKeys = {"sequencer_lat_us",   "isotach_lat_us",
                                               "sequencer_thru_mps", "isotach_thru_mps",
                                               "mpi_bcast_lat_us",   "mpi_bcast_thru_mps"};

// Its own jobs: one per node count and round, alternating with the MPI peer.
bool ordered_collect(const std::string& bin, const std::string& nic, bool quick, int rounds,
                     iso::bench::sample_table& ours, iso::bench::sample_table& peer) {
  for (const int nodes : kOrderedNodes) {
    const std::string command = absl::StrFormat(
        "'%s/isorun' -n %d --transport %s -- '%s/order-bench' --worker --only=ordered%s%s", bin,
        nodes, ordered_inproc(nodes) ? "inproc" : "shm", bin, quick ? " --quick" : "",
        nic.empty() ? "" : " --nic " + nic);
    const std::optional<std::string> mpi =
        iso::bench::mpi_peer_command(bin, "order-bench-mpi", nodes, quick ? " --quick" : "");
    for (int round = 0; round < rounds; ++round) {
      if (!iso::bench::collect_indexed(command, kOrderedKeys, ours)) {
        std::fprintf(stderr, "order-bench: our measurement failed (%s)\n", command.c_str());
        return false;
      }
      if (mpi) (void)iso::bench::collect_indexed(*mpi, kOrderedKeys, peer, true);
    }
  }
  return true;
}

void ordered_table(const iso::bench::sample_table& ours, const iso::bench::sample_table& peer) {
  using iso::bench::indexed_key;
  using iso::bench::summarize;
  auto find = [](const iso::bench::sample_table& t, const std::string& key) {
    auto it = t.find(key);
    return it == t.end() ? std::nullopt : summarize(it->second);
  };
  const long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
  const auto where = [&](int nodes) {
    return ordered_inproc(nodes) ? absl::StrFormat("%d nodes (inproc, %ld cores)", nodes, cores)
                                 : absl::StrFormat("%d nodes (shm)", nodes);
  };
  for (const char* order : {"sequencer", "isotach"}) {
    std::printf(
        "\nordered message (64 B) to the last member, %s order, microseconds: "
        "median [min-max]\n",
        order);
    iso::bench::print_header(absl::StrFormat("iso %s", order).c_str(), "MPI_Bcast");
    for (const int nodes : kOrderedNodes) {
      iso::bench::print_row(where(nodes),
                            find(ours, indexed_key(std::string(order) + "_lat_us", nodes)),
                            find(peer, indexed_key("mpi_bcast_lat_us", nodes)));
    }
    std::printf(
        "\nordered messages (64 B) per second with batching, %s order: "
        "median [min-max]\n",
        order);
    iso::bench::print_header(absl::StrFormat("iso %s", order).c_str(), "MPI_Bcast");
    for (const int nodes : kOrderedNodes) {
      iso::bench::print_row(where(nodes),
                            find(ours, indexed_key(std::string(order) + "_thru_mps", nodes)),
                            find(peer, indexed_key("mpi_bcast_thru_mps", nodes)));
    }
  }
}

// ---- the sections ------------------------------------------------------------------------

struct section {
  const char* name;
  void (*worker)(iso::node&, const run_config&);
  void (*table)(const iso::bench::sample_table& ours, const iso::bench::sample_table& peer);
  bool needs_peer_sizes;  // the OpenSHMEM peer's sized figures (--sizes)
  // Sections that start jobs of their own (others share one 2-process job per round).
  bool (*collect)(const std::string& bin, const std::string& nic, bool quick, int rounds,
                  iso::bench::sample_table& ours, iso::bench::sample_table& peer) = nullptr;
};

constexpr section kSections[] = {
    {"ordered", ordered_worker, ordered_table, false, ordered_collect},
    {"fetch_add", fetch_add_worker, fetch_add_table, false},
    {"put_get", put_get_worker, put_get_table, true},
};

// Our workers' indexed lines: "<key> <bytes> <value>".
const std::vector<std::string> kIndexedKeys = {"put_fence_us", "get_us"};

// The sections --only names (all without it); false, with a message, for an unknown name.
bool select_sections(const std::string& only, std::vector<const section*>& out) {
  if (only.empty()) {
    for (const section& s : kSections) out.push_back(&s);
    return true;
  }
  const std::vector<std::string> names = absl::StrSplit(only, ',');
  for (const std::string& name : names) {
    const section* found = nullptr;
    for (const section& s : kSections) {
      if (name == s.name) found = &s;
    }
    if (found == nullptr) {
      std::string known;
      for (const section& s : kSections) known += std::string(" ") + s.name;
      std::fprintf(stderr, "order-bench: no section '%s'; sections:%s\n", name.c_str(),
                   known.c_str());
      return false;
    }
    out.push_back(found);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  // --only=... is ours; the rest is the isotach benchmarks' common command line.
  std::string only;
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    if (i > 0 && std::strncmp(argv[i], "--only=", 7) == 0) {
      only = argv[i] + 7;
    } else {
      rest.push_back(argv[i]);
    }
  }
  int rest_argc = static_cast<int>(rest.size());
  const std::optional<iso::bench::bench_args> args =
      iso::bench::parse_bench_args(rest_argc, rest.data(), "order-bench", false);
  if (!args) {
    std::fprintf(stderr, "order-bench also takes --only=SECTION[,SECTION...]\n");
    return 2;
  }
  std::vector<const section*> sections;
  if (!select_sections(only, sections)) return 2;
  const run_config cfg{.repetitions = args->quick ? 3 : 9, .quick = args->quick};

  if (args->as_worker) {
    iso::options opts;
    opts.nic = args->mode;
    return iso::run(rest_argc, rest.data(), opts, [&](iso::node& node) {
      for (const section* s : sections) s->worker(node, cfg);
    });
  }

  const std::string bin = iso::bench::program_directory();
  const int rounds = args->quick ? 1 : 3;
  iso::bench::sample_table ours, peer;
  std::vector<const section*> shared;  // the sections of the shared 2-process job
  for (const section* s : sections) {
    if (s->collect == nullptr) {
      shared.push_back(s);
      continue;
    }
    std::printf("order-bench: %s; its own jobs, %d rounds each, alternating with its peer\n",
                s->name, rounds);
    std::fflush(stdout);
    if (!s->collect(bin, args->nic, args->quick, rounds, ours, peer)) return 1;
  }
  if (!shared.empty()) {
    std::string names;
    for (const section* s : shared) names += (names.empty() ? "" : ",") + std::string(s->name);
    const std::string command = absl::StrFormat(
        "'%s/isorun' -n 2 -- '%s/order-bench' --worker --only=%s%s%s", bin, bin, names,
        args->quick ? " --quick" : "", args->nic.empty() ? "" : " --nic " + args->nic);
    bool peer_sizes = false;
    for (const section* s : shared) peer_sizes |= s->needs_peer_sizes;
    const bool have_peer = iso::bench::shmem_peer_built(bin);
    std::printf(
        "order-bench: %s; 2 processes (shm), %d rounds x %d repetitions, alternating with "
        "the OpenSHMEM peer\n",
        names.c_str(), rounds, cfg.repetitions);
    std::fflush(stdout);
    for (int round = 0; round < rounds; ++round) {
      if (!iso::bench::collect_indexed(command, kIndexedKeys, ours)) {
        std::fprintf(stderr, "order-bench: our measurement failed (%s)\n", command.c_str());
        return 1;
      }
      if (have_peer) {
        if (peer_sizes) {
          iso::bench::collect_shmem_peer_sizes(bin, args->quick, peer);
        } else {
          iso::bench::collect_shmem_peer(bin, args->quick, peer);
        }
      }
    }
    if (!have_peer) std::printf("(no OpenSHMEM peer built: ours only)\n");
  }
  for (const section* s : sections) s->table(ours, peer);
  return 0;
}
