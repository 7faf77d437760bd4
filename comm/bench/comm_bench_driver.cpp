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
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "comm/bench/bench_protocol.hpp"
#include "comm/bench/comm_bench.hpp"

namespace {

namespace fs = std::filesystem;

struct row {
  double median = 0, min = 0, max = 0, extra = 0;
};
struct results {
  std::map<std::size_t, row> latency;
  std::map<std::size_t, row> bandwidth;
  bool ok = false;
};

results collect(const std::string& command) {
  results out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char line[512];
  while (std::fgets(line, sizeof(line), pipe) != nullptr) {
    std::istringstream in(line);
    std::string kind;
    std::size_t size = 0;
    row r;
    in >> kind >> size >> r.median >> r.min >> r.max;
    if (kind == "lat") out.latency[size] = r;
    if (kind == "bw") {
      in >> r.extra;
      out.bandwidth[size] = r;
    }
  }
  out.ok = ::pclose(pipe) == 0;
  return out;
}

std::string cell(const std::map<std::size_t, row>& table, std::size_t size, const char* format) {
  auto it = table.find(size);
  if (it == table.end()) return "-";
  return absl::StrFormat("%s [%s-%s]", absl::StrFormat(format, it->second.median),
                         absl::StrFormat(format, it->second.min),
                         absl::StrFormat(format, it->second.max));
}

std::string ratio(const results& a, const results& b, bool latency, std::size_t size) {
  const auto& ta = latency ? a.latency : a.bandwidth;
  const auto& tb = latency ? b.latency : b.bandwidth;
  auto ia = ta.find(size);
  auto ib = tb.find(size);
  if (ia == ta.end() || ib == tb.end() || ib->second.median == 0) return "-";
  return absl::StrFormat("%.2f", ia->second.median / ib->second.median);
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
  std::printf("comm-bench: 2 processes, shm transport vs Open MPI (ob1/vader), %d repetitions\n",
              iso::bench::kRepetitions);
  std::fflush(stdout);
  const results ours = collect(absl::StrFormat("'%s' -n 2 -- '%s'", (bin / "isorun").string(),
                                               self.string()));
  if (!ours.ok) {
    std::fprintf(stderr, "comm-bench: the shm measurement failed\n");
    return 1;
  }
  results mpi;
  const fs::path mpi_worker = bin / "comm-bench-mpi";
  if (use_mpi && have_mpirun() && fs::exists(mpi_worker)) {
    if (::geteuid() == 0) {
      ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
      ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    }
    mpi = collect(absl::StrFormat(
        "mpirun -n 2 --bind-to core --mca pml ob1 --mca btl self,vader '%s' 2>/dev/null",
        mpi_worker.string()));
    if (!mpi.ok) std::printf("(the Open MPI peer failed to run; showing ours only)\n");
  } else {
    std::printf("(no Open MPI peer: mpirun or comm-bench-mpi missing; showing ours only)\n");
  }

  std::printf("\none-way latency, microseconds: median [min-max]\n");
  std::printf("%8s  %-26s %-26s %s\n", "bytes", "iso shm", "Open MPI", "iso/MPI");
  for (std::size_t size : iso::bench::kLatencySizes) {
    std::printf("%8zu  %-26s %-26s %s\n", size, cell(ours.latency, size, "%.3f").c_str(),
                cell(mpi.latency, size, "%.3f").c_str(), ratio(ours, mpi, true, size).c_str());
  }
  std::printf("\nstreaming throughput, MB/s: median [min-max]\n");
  std::printf("%8s  %-26s %-26s %s\n", "bytes", "iso shm", "Open MPI", "iso/MPI");
  for (std::size_t size : iso::bench::kBandwidthSizes) {
    std::printf("%8zu  %-26s %-26s %s\n", size, cell(ours.bandwidth, size, "%.0f").c_str(),
                cell(mpi.bandwidth, size, "%.0f").c_str(), ratio(ours, mpi, false, size).c_str());
  }
  return 0;
}
