// iso-thru: isochron issue time by isochron size, as in the Regehr report's Table 4.1 (its
// lat.c issued NUM = 10000 isochrons of SIZE writes in a loop, the k-th write of each to
// variable k * JUMPSIZE so that every write hits a different page, and divided the elapsed
// time by NUM). Node 0 measures, node 1 serves (polls) until node 0 sets a flag.
//
// Variants, for isochrons of 1, 2, 4, 8, 16 and 32 writes (JUMPSIZE is a page):
//   all-remote: every page's only copy is on node 1, so the isochron is one remote part.
//   mixed:      even pages are replicated on both nodes, odd pages live only on node 1, so
//               the isochron has a local part (node 0's copies of the even pages) and a
//               remote part. With one write the only variable is a replicated one.
// Figures, in microseconds per isochron:
//   issue:          the loop that issues N isochrons, divided by N. Issuing never waits for
//                   execution, except that end() blocks while the NIC's queue is full, so for
//                   large isochrons (or an inline NIC, which only runs when the application
//                   calls into the runtime) the queue's back-pressure shows up here.
//   issue+complete: the same loop followed by node.quiesce() (every isochron has executed
//                   at node 0, hence its logical time has passed), divided by N.
// Beside them, OpenSHMEM's k shmem_long_p then one shmem_quiet (shmem_p_quiet_k_us), which
// completes the puts: it compares with issue+complete; the ratio on the issue rows says how
// much of that a non-blocking isochron issue costs.
//
//   build/bin/iso-thru                    # drives: isorun -n 2 for ours, oshrun for the peer
//   build/bin/iso-thru --quick            # fewer isochrons and repetitions (for tests)
//   build/bin/iso-thru --nic thread       # the NIC mode (thread|inline|auto; default auto)
#include <chrono>
#include <cstdint>
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

constexpr int kSizes[] = {1, 2, 4, 8, 16, 32};
constexpr int kMaxSize = 32;

double micros(clock_type::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

// Issues `count` isochrons of `size` writes to `vars[k * jump]`, k < size.
void issue_batch(iso::node& node, iso::shared_array<std::int64_t> vars, std::uint32_t jump,
                 int size, int count) {
  for (int i = 0; i < count; ++i) {
    iso::isochron iso(node);
    for (int k = 0; k < size; ++k) {
      iso.write(vars[static_cast<std::size_t>(k) * jump], std::int64_t{i});
    }
    iso.end();
  }
}

void measure(iso::node& node, const char* variant, iso::shared_array<std::int64_t> vars,
             std::uint32_t jump, int count) {
  for (int size : kSizes) {
    const auto start = clock_type::now();
    issue_batch(node, vars, jump, size, count);
    const auto issued = clock_type::now();
    node.quiesce();
    const auto completed = clock_type::now();
    std::printf("%s_issue_us %d %.4f\n%s_total_us %d %.4f\n", variant, size,
                micros(issued - start) / count, variant, size, micros(completed - start) / count);
  }
  std::fflush(stdout);
}

// The last batch of each variant had the largest size, so every slot holds count - 1: a
// transport that dropped writes cannot produce a flattering figure unnoticed.
bool verify(iso::node& node, iso::shared_array<std::int64_t> vars, std::uint32_t jump, int count) {
  std::vector<iso::value<std::int64_t>> got;
  {
    iso::isochron iso(node);
    for (int k = 0; k < kMaxSize; ++k) {
      got.push_back(iso.read(vars[static_cast<std::size_t>(k) * jump]));
    }
    iso.end();
  }
  for (const auto& v : got) {
    if (v.get() != count - 1) return false;
  }
  return true;
}

void worker(iso::node& node, int repetitions, int count) {
  if (node.count() != 2) throw iso::error(iso::error_code::invalid_argument, "needs 2 nodes");
  const std::uint32_t jump = node.options().page_variables;
  const std::size_t span = static_cast<std::size_t>(kMaxSize) * jump;
  auto remote = node.allocate<std::int64_t>(span, iso::placement::on(1));
  auto mixed = node.allocate<std::int64_t>(
      span, iso::placement::per_page([](std::uint64_t page) {
        return page % 2 == 0 ? std::vector<iso::node_id>{0, 1} : std::vector<iso::node_id>{1};
      }));
  auto done = node.allocate<std::int64_t>(1, iso::placement::on(1))[0];
  node.barrier();
  if (node.id() == 1) {
    iso::bench::serve_until(node, done);
  } else {
    // Warm-up: page in both arrays on both nodes and grow the runtime's buffers.
    issue_batch(node, remote, jump, kMaxSize, count / 10 + 1);
    issue_batch(node, mixed, jump, kMaxSize, count / 10 + 1);
    node.quiesce();
    for (int rep = 0; rep < repetitions; ++rep) {
      measure(node, "remote", remote, jump, count);
      measure(node, "mixed", mixed, jump, count);
    }
    const bool ok = verify(node, remote, jump, count) && verify(node, mixed, jump, count);
    iso::isochron iso(node);
    iso.write(done, std::int64_t{1});
    iso.end();
    if (!ok) {
      throw iso::error(iso::error_code::data_loss,
                       "iso-thru: node 1 does not hold the values written last");
    }
  }
  node.barrier();
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<iso::bench::bench_args> parsed =
      iso::bench::parse_bench_args(argc, argv, "iso-thru", false);
  if (!parsed) return 2;
  const iso::bench::bench_args& cfg = *parsed;
  iso::options opts;
  opts.nic = cfg.mode;
  const int repetitions = cfg.quick ? 3 : 5;
  const int count = cfg.quick ? 1000 : 10000;  // lat.c's NUM
  if (cfg.as_worker) {
    return iso::run(argc, argv, opts, [&](iso::node& node) { worker(node, repetitions, count); });
  }

  const std::string bin = iso::bench::program_directory();
  const std::string self = bin + "/iso-thru";
  const std::string nic = cfg.nic.empty() ? "auto" : cfg.nic;
  const std::string flags = absl::StrFormat("%s --nic %s", cfg.quick ? " --quick" : "", nic);
  const std::vector<std::string> indexed = {"remote_issue_us", "remote_total_us", "mixed_issue_us",
                                            "mixed_total_us", "shmem_p_quiet_k_us"};
  iso::bench::sample_table ours, peer;
  const bool have_peer = iso::bench::shmem_peer_built(bin);
  const int rounds = cfg.quick ? 1 : 3;
  std::printf(
      "iso-thru: isochrons of k writes to distinct pages, 2 processes (shm), nic %s,\n"
      "%d isochrons per figure, %d rounds x %d repetitions\n",
      nic.c_str(), count, rounds, repetitions);
  std::fflush(stdout);
  for (int round = 0; round < rounds; ++round) {
    if (!iso::bench::collect_indexed(
            absl::StrFormat("'%s/isorun' -n 2 -- '%s' --worker%s", bin, self, flags), indexed,
            ours)) {
      std::fprintf(stderr, "iso-thru: our measurement failed\n");
      return 1;
    }
    if (have_peer) {
      iso::bench::collect_indexed(absl::StrFormat("'%s/run_shmem_peer.sh' '%s/iso-shmem-peer'%s "
                                                  "2>/dev/null",
                                                  bin, bin, cfg.quick ? " --quick" : ""),
                                  indexed, peer, /*tolerate_exit=*/true);
    }
  }
  if (!have_peer) std::printf("(no OpenSHMEM peer built: ours only)\n");
  using iso::bench::indexed_key;
  using iso::bench::summarize;
  std::printf("\nmicroseconds per isochron: median [min-max]; peer: k puts + quiet\n");
  iso::bench::print_header("iso", "OpenSHMEM");
  for (const char* variant : {"remote", "mixed"}) {
    for (int k : kSizes) {
      const auto p = summarize(peer[indexed_key("shmem_p_quiet_k_us", k)]);
      const std::string name = std::string(variant) == "remote" ? "all-remote" : "mixed";
      iso::bench::print_row(absl::StrFormat("%s k=%d issue", name, k),
                            summarize(ours[indexed_key(std::string(variant) + "_issue_us", k)]), p);
      iso::bench::print_row(absl::StrFormat("%s k=%d issue+complete", name, k),
                            summarize(ours[indexed_key(std::string(variant) + "_total_us", k)]), p);
    }
  }
  return 0;
}
