// order-bench: the NIC services that ordered broadcast builds on, beside their closest
// OpenSHMEM operations measured in the same run (2 processes on this host; node 0 measures
// while node 1 serves, as the OpenSHMEM peer's PE 0 does against PE 1).
//
// Sections (each a function pair below; --only picks some, all run by default):
//   fetch_add  node.fetch_add on a NIC counter held by node 1, the answer back, beside
//              shmem_atomic_fetch_add.
//   put_get    node.put of 8 B to 64 KiB into node 1's window followed by node.fence(),
//              beside shmem_putmem + shmem_quiet; node.get of the same sizes, beside
//              shmem_getmem.
// Rounds alternate ours and the peer's; each round's worker prints one mean per repetition
// and figure, and the table shows medians [min-max] over all of them, with ours/peer.
//
//   build/bin/order-bench                       # every section
//   build/bin/order-bench --only=fetch_add      # one section (a comma list for several)
//   build/bin/order-bench --quick --nic thread  # fewer repetitions; NICs on threads
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
  iso::bench::print_row("fetch_add, counter on the other NIC", find(ours, "fetch_add_us"),
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

// ---- the sections ------------------------------------------------------------------------

struct section {
  const char* name;
  void (*worker)(iso::node&, const run_config&);
  void (*table)(const iso::bench::sample_table& ours, const iso::bench::sample_table& peer);
  bool needs_peer_sizes;  // the OpenSHMEM peer's sized figures (--sizes)
};

constexpr section kSections[] = {
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
  std::string names;
  for (const section* s : sections) names += (names.empty() ? "" : ",") + std::string(s->name);
  const std::string command = absl::StrFormat(
      "'%s/isorun' -n 2 -- '%s/order-bench' --worker --only=%s%s%s", bin, bin, names,
      args->quick ? " --quick" : "", args->nic.empty() ? "" : " --nic " + args->nic);
  bool peer_sizes = false;
  for (const section* s : sections) peer_sizes |= s->needs_peer_sizes;
  const bool have_peer = iso::bench::shmem_peer_built(bin);
  const int rounds = args->quick ? 1 : 3;
  std::printf(
      "order-bench: %s; 2 processes (shm), %d rounds x %d repetitions, alternating with "
      "the OpenSHMEM peer\n",
      names.c_str(), rounds, cfg.repetitions);
  std::fflush(stdout);
  iso::bench::sample_table ours, peer;
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
  for (const section* s : sections) s->table(ours, peer);
  return 0;
}
