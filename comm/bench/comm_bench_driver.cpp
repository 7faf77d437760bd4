// comm-bench: one-way latency and streaming throughput of the shm transport between two
// processes, and the same measured through Open MPI in the same run when mpirun is
// installed, printed side by side with the ratio (ours / MPI for latency, so lower is
// better; ours / MPI for bandwidth, so higher is better).
//
//   build/bin/comm-bench            # drives everything
//   build/bin/comm-bench --no-mpi   # ours only
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

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
                 std::span<const std::size_t> sizes, iso::bench::sample_table& ours,
                 iso::bench::sample_table& peer) {
  std::printf("\n%s: median [min-max]\n", title);
  std::printf("%8s  %-24s %-24s %s\n", "bytes", "iso shm", "Open MPI", "iso/MPI");
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
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--no-mpi") == 0) {
      use_mpi = false;
    } else {
      std::fprintf(stderr, "usage: comm-bench [--no-mpi]\n");
      return 2;
    }
  }
  const fs::path self = fs::canonical("/proc/self/exe");
  const fs::path bin = self.parent_path();
  std::printf(
      "comm-bench: 2 processes pinned to cores 0 and 1, iso shm transport vs Open MPI\n"
      "(ob1/vader); %d alternating rounds of %d runs per size\n",
      iso::bench::kRounds, iso::bench::kRepetitionsPerRound);
  std::fflush(stdout);
  const std::string our_command =
      absl::StrFormat("'%s' -n 2 -- '%s'", (bin / "isorun").string(), self.string());
  const fs::path mpi_worker = bin / "comm-bench-mpi";
  bool peer = use_mpi && have_mpirun() && fs::exists(mpi_worker);
  // The peer at its best here: shared memory (vader) without the single-copy mechanism,
  // which containers often forbid and which then costs it ~3x at small sizes.
  const std::string peer_command = absl::StrFormat(
      "mpirun -n 2 --bind-to core --mca pml ob1 --mca btl self,vader "
      "--mca btl_vader_single_copy_mechanism none '%s' 2>/dev/null",
      mpi_worker.string());
  if (peer && ::geteuid() == 0) {
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  }
  if (!peer) std::printf("(no Open MPI peer: mpirun or comm-bench-mpi missing; ours only)\n");
  iso::bench::sample_table ours, theirs;
  for (int round = 0; round < iso::bench::kRounds; ++round) {
    if (!iso::bench::collect_indexed(our_command, kFigures, ours)) {
      std::fprintf(stderr, "comm-bench: the shm measurement failed\n");
      return 1;
    }
    if (peer && !iso::bench::collect_indexed(peer_command, kFigures, theirs)) {
      std::printf("(the Open MPI peer failed to run; ours only)\n");
      peer = false;
    }
  }
  print_table("one-way latency, microseconds", "%.3f", "lat", iso::bench::kLatencySizes, ours,
              theirs);
  print_table("streaming throughput, MB/s", "%.0f", "bw", iso::bench::kBandwidthSizes, ours,
              theirs);
  return 0;
}
