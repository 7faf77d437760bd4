// comm-bench: one-way latency and streaming throughput of a transport between two
// processes, and the same measured through Open MPI in the same run when mpirun is
// installed, printed side by side with the ratio (ours / MPI for latency, so lower is
// better; ours / MPI for bandwidth, so higher is better).
//
//   build/bin/comm-bench                    # the shm transport beside Open MPI's vader
//   build/bin/comm-bench --no-mpi           # ours only
//   build/bin/comm-bench --ucx              # the ucx transport beside Open MPI's pml ucx,
//                                           # both on the lanes UCX chooses
//   build/bin/comm-bench --ucx --tls=tcp    # both on UCX_TLS=tcp
//   build/bin/comm-bench --rounds=1         # one round (3 runs per size) of each
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "comm/bench/bench_protocol.hpp"
#include "comm/bench/comm_bench.hpp"
#include "tools/bench_support/bench_driver.hpp"
#include "tools/bench_support/bench_stats.hpp"

namespace {

namespace fs = std::filesystem;

// Workers print "lat <bytes> <us>" and "bw <bytes> <MB/s>" (bench_protocol.hpp).
const std::vector<std::string> kFigures = {"lat", "bw"};

std::optional<iso::bench::summary> summary_of(iso::bench::sample_table& samples, const char* figure,
                                              std::size_t size) {
  return iso::bench::summarize(samples[iso::bench::indexed_key(figure, static_cast<int>(size))]);
}

std::string ratio(const std::optional<iso::bench::summary>& ours,
                  const std::optional<iso::bench::summary>& peer) {
  if (!ours || !peer || peer->median == 0) return "-";
  return absl::StrFormat("%.2f", ours->median / peer->median);
}

void print_table(const char* title, const char* format, const char* figure,
                 std::span<const std::size_t> sizes, const std::string& ours_name,
                 iso::bench::sample_table& ours, iso::bench::sample_table& peer) {
  std::printf("\n%s: median [min-max]\n", title);
  std::printf("%8s  %-24s %-24s %s\n", "bytes", ours_name.c_str(), "Open MPI", "iso/MPI");
  for (std::size_t size : sizes) {
    const auto a = summary_of(ours, figure, size);
    const auto b = summary_of(peer, figure, size);
    std::printf("%8zu  %-24s %-24s %s\n", size, iso::bench::cell(a, format).c_str(),
                iso::bench::cell(b, format).c_str(), ratio(a, b).c_str());
  }
}

bool have_mpirun() { return std::system("command -v mpirun >/dev/null 2>&1") == 0; }

}  // namespace

int main(int argc, char** argv) {
  if (std::getenv("ISO_RANK") != nullptr) return iso::bench::run_worker();

  bool use_mpi = true;
  bool ucx = false;
  int rounds = iso::bench::kRounds;
  std::string tls;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--no-mpi") {
      use_mpi = false;
    } else if (arg.starts_with("--rounds=") &&
               absl::SimpleAtoi(std::string(arg.substr(9)), &rounds) && rounds > 0 &&
               rounds < 100) {
    } else if (arg == "--ucx") {
      ucx = true;
    } else if (arg.starts_with("--tls=") && arg.size() > 6 &&
               arg.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_,", 6) ==
                   std::string_view::npos) {
      tls = std::string(arg.substr(6));
    } else {
      std::fprintf(
          stderr,
          "usage: comm-bench [--no-mpi] [--rounds=<1..99>] [--ucx [--tls=<UCX_TLS list>]]\n");
      return 2;
    }
  }
  if (!tls.empty() && !ucx) {
    std::fprintf(stderr, "comm-bench: --tls chooses UCX lanes, so it needs --ucx\n");
    return 2;
  }
  const fs::path self = fs::canonical("/proc/self/exe");
  const fs::path bin = self.parent_path();
  const std::string lanes = tls.empty() ? "the lanes UCX chooses" : "UCX_TLS=" + tls;
  std::printf(
      "comm-bench: 2 processes pinned to cores 0 and 1, %s; %d alternating rounds of %d runs "
      "per size\n",
      (ucx ? "iso ucx transport vs Open MPI (pml ucx), both on " + lanes
           : std::string("iso shm transport vs Open MPI (ob1/vader)"))
          .c_str(),
      rounds, iso::bench::kRepetitionsPerRound);
  std::fflush(stdout);
  const std::string our_command = absl::StrFormat(
      "%s'%s' -n 2 -- '%s'",
      ucx ? absl::StrFormat("ISO_BENCH_TRANSPORT=ucx ISO_BENCH_UCX_TLS='%s' ", tls) : "",
      (bin / "isorun").string(), self.string());
  const fs::path mpi_worker = bin / "comm-bench-mpi";
  bool peer = use_mpi && have_mpirun() && fs::exists(mpi_worker);
  // The peer at its best here: shared memory (vader) without the single-copy mechanism,
  // which containers often forbid and which then costs it ~3x at small sizes.
  std::string peer_command = absl::StrFormat(
      "mpirun -n 2 --bind-to core --mca pml ob1 --mca btl self,vader "
      "--mca btl_vader_single_copy_mechanism none '%s' 2>/dev/null",
      mpi_worker.string());
  if (ucx) {
    // Its UCX in the same mode as ours: the pml on UCX, the same lanes. Open MPI 4.1's pml
    // ucx declines to run without InfiniBand devices unless told that any will do.
    peer_command = absl::StrFormat(
        "mpirun -n 2 --bind-to core --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices "
        "any %s '%s' 2>/dev/null",
        tls.empty() ? "" : "-x UCX_TLS=" + tls, mpi_worker.string());
  }
  if (peer && ::geteuid() == 0) {
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  }
  if (!peer) std::printf("(no Open MPI peer: mpirun or comm-bench-mpi missing; ours only)\n");
  iso::bench::sample_table ours, theirs;
  for (int round = 0; round < rounds; ++round) {
    if (!iso::bench::collect_indexed(our_command, kFigures, ours)) {
      std::fprintf(stderr, "comm-bench: the %s measurement failed\n", ucx ? "ucx" : "shm");
      return 1;
    }
    if (peer && !iso::bench::collect_indexed(peer_command, kFigures, theirs)) {
      std::printf("(the Open MPI peer failed to run; ours only)\n");
      peer = false;
    }
  }
  const std::string ours_name = ucx ? "iso ucx" : "iso shm";
  print_table("one-way latency, microseconds", "%.3f", "lat", iso::bench::kLatencySizes, ours_name,
              ours, theirs);
  print_table("streaming throughput, MB/s", "%.0f", "bw", iso::bench::kBandwidthSizes, ours_name,
              ours, theirs);
  return 0;
}
