// order-bench-mpi: the Open MPI peer of order-bench's ordered-message section, measured
// the same way with MPI_Bcast of the same payload (64 bytes):
//   latency     rank 0 broadcasts; the last rank, once it has it, broadcasts one back; half
//               of rank 0's median round trip.
//   throughput  every rank in turn broadcasts `messages` payloads (MPI_Bcast is collective:
//               each call moves one rank's message to all); messages per second at rank 0.
// Prints mpi_bcast_lat_us <ranks> <us> and mpi_bcast_thru_mps <ranks> <messages/s>;
// order-bench runs it (mpirun -n N) beside its own jobs.
//
//   mpirun -n 4 build/bin/order-bench-mpi [--quick]
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  bool quick = false;
  for (int i = 1; i < argc; ++i) quick |= std::strcmp(argv[i], "--quick") == 0;
  const int round_trips = quick ? 50 : 200;
  const int messages = quick ? 20'000 : 200'000;
  std::vector<char> payload(64, 0x5a);
  using clock_type = std::chrono::steady_clock;

  std::vector<double> rounds;
  for (int i = 0; i < round_trips; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = clock_type::now();
    MPI_Bcast(payload.data(), 64, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (size > 1) MPI_Bcast(payload.data(), 64, MPI_CHAR, size - 1, MPI_COMM_WORLD);
    rounds.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - start).count() /
                     2);
  }
  std::sort(rounds.begin(), rounds.end());

  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = clock_type::now();
  for (int i = 0; i < messages; ++i) {
    for (int root = 0; root < size; ++root) {
      MPI_Bcast(payload.data(), 64, MPI_CHAR, root, MPI_COMM_WORLD);
    }
  }
  const double seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  if (rank == 0) {
    std::printf("mpi_bcast_lat_us %d %.3f\n", size, rounds[rounds.size() / 2]);
    std::printf("mpi_bcast_thru_mps %d %.0f\n", size,
                static_cast<double>(messages) * size / seconds);
  }
  MPI_Finalize();
  return 0;
}
