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
#include <map>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "comm/bench/bench_protocol.hpp"
#include "comm/bench/bench_stats.hpp"
#include "comm/bench/comm_bench.hpp"

namespace {

namespace fs = std::filesystem;

// Samples per size, for latency and for bandwidth.
struct samples {
  std::map<std::size_t, std::vector<double>> latency;
  std::map<std::size_t, std::vector<double>> bandwidth;
};

// Runs one round of a worker and appends its samples; false when the worker failed.
bool collect(const std::string& command, samples& into) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return false;
  char line[256];
  while (std::fgets(line, sizeof(line), pipe) != nullptr) {
    std::istringstream in(line);
    std::string kind;
    std::size_t size = 0;
    double value = 0;
    if (!(in >> kind >> size >> value)) continue;
    if (kind == "lat") into.latency[size].push_back(value);
    if (kind == "bw") into.bandwidth[size].push_back(value);
  }
  return ::pclose(pipe) == 0;
}

std::optional<iso::bench::summary> summary_of(const std::map<std::size_t, std::vector<double>>& m,
                                              std::size_t size) {
  auto it = m.find(size);
  if (it == m.end()) return std::nullopt;
  return iso::bench::summarize(it->second);
}

std::string cell(const std::optional<iso::bench::summary>& s, const char* format) {
  if (!s) return "-";
  return absl::StrFormat("%s [%s-%s]", absl::StrFormat(format, s->median),
                         absl::StrFormat(format, s->min), absl::StrFormat(format, s->max));
}

std::string ratio(const std::optional<iso::bench::summary>& ours,
                  const std::optional<iso::bench::summary>& peer) {
  if (!ours || !peer || peer->median == 0) return "-";
  return absl::StrFormat("%.2f", ours->median / peer->median);
}

void print_table(const char* title, const char* format, std::span<const std::size_t> sizes,
                 const std::map<std::size_t, std::vector<double>>& ours,
                 const std::map<std::size_t, std::vector<double>>& peer) {
  std::printf("\n%s: median [min-max]\n", title);
  std::printf("%8s  %-24s %-24s %s\n", "bytes", "iso shm", "Open MPI", "iso/MPI");
  for (std::size_t size : sizes) {
    const auto a = summary_of(ours, size);
    const auto b = summary_of(peer, size);
    std::printf("%8zu  %-24s %-24s %s\n", size, cell(a, format).c_str(), cell(b, format).c_str(),
                ratio(a, b).c_str());
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
  samples ours, theirs;
  for (int round = 0; round < iso::bench::kRounds; ++round) {
    if (!collect(our_command, ours)) {
      std::fprintf(stderr, "comm-bench: the shm measurement failed\n");
      return 1;
    }
    if (peer && !collect(peer_command, theirs)) {
      std::printf("(the Open MPI peer failed to run; ours only)\n");
      peer = false;
    }
  }
  print_table("one-way latency, microseconds", "%.3f", iso::bench::kLatencySizes, ours.latency,
              theirs.latency);
  print_table("streaming throughput, MB/s", "%.0f", iso::bench::kBandwidthSizes, ours.bandwidth,
              theirs.bandwidth);
  return 0;
}
