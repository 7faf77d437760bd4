// obj-bench-mpi: the Open MPI peer of obj-bench's replicated writes, MPI_Bcast of the
// bytes a replicated inc() puts into the objects order (--bytes, default 32: its header
// and its argument), measured as obj-bench measures ours:
//   mpi_bcast_root_us   rank 0's MPI_Bcast returns (beside "to the caller's resume");
//   mpi_bcast_ack_us    rank 0 broadcasts and every other rank, once it has the bytes,
//                       answers with an 8-byte MPI_Send; until rank 0 has every answer
//                       (beside "to the last replica", acknowledged the same way);
//   mpi_bcast_thru_us   every rank in turn broadcasts (MPI_Bcast is collective: each call
//                       moves one rank's bytes to all); microseconds per broadcast at rank 0.
// Medians of the timed operations, each timed alone after a barrier; obj-bench runs it
// (mpirun -n N) beside its own jobs.
//
//   mpirun -n 4 build/bin/obj-bench-mpi [--quick] [--bytes 32]
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double micros_since(clock_type::time_point start) {
  return std::chrono::duration<double, std::micro>(clock_type::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  bool quick = false;
  int bytes = 32;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    if (std::strcmp(argv[i], "--bytes") == 0 && i + 1 < argc) bytes = std::atoi(argv[++i]);
  }
  bytes = std::clamp(bytes, 1, 1 << 20);
  const int timed = quick ? 200 : 1000;
  const int messages = quick ? 20'000 : 100'000;
  std::vector<char> payload(static_cast<std::size_t>(bytes), 0x5a);
  long long ack = 0;

  std::vector<double> root;
  std::vector<double> acked;
  for (int i = 0; i < timed; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    auto start = clock_type::now();
    MPI_Bcast(payload.data(), bytes, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) root.push_back(micros_since(start));
    MPI_Barrier(MPI_COMM_WORLD);
    start = clock_type::now();
    MPI_Bcast(payload.data(), bytes, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      for (int r = 1; r < size; ++r) {
        MPI_Recv(&ack, 1, MPI_LONG_LONG, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      acked.push_back(micros_since(start));
    } else {
      MPI_Send(&ack, 1, MPI_LONG_LONG, 0, 7, MPI_COMM_WORLD);
    }
  }

  MPI_Barrier(MPI_COMM_WORLD);
  const int turns = messages / size;  // every rank broadcasts once per turn
  const auto start = clock_type::now();
  for (int i = 0; i < turns; ++i) {
    for (int r = 0; r < size; ++r) MPI_Bcast(payload.data(), bytes, MPI_CHAR, r, MPI_COMM_WORLD);
  }
  const double seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  if (rank == 0) {
    std::printf("mpi_bcast_root_us %d %.3f\n", size, median(root));
    std::printf("mpi_bcast_ack_us %d %.3f\n", size, median(acked));
    std::printf("mpi_bcast_thru_us %d %.4f\n", size,
                seconds * 1e6 / (static_cast<double>(turns) * size));
  }
  MPI_Finalize();
  return 0;
}
