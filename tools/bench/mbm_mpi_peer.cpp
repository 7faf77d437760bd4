// mbm-bench-mpi: the Open MPI peer of mbm-bench. The same two measurements as its plain
// (non-isotach) messages, through MPI_Send/MPI_Recv between 2 ranks:
//   latency     ping-pong: rank 1 sends, rank 0 answers; one-way latency is half the
//               round trip, as rank 1 sees it. MPI_Recv lands each message in the user
//               buffer, which is the copy mbm-bench's receivers make.
//   throughput  rank 1 streams mbm::kStreamBytes in messages of one size; MB/s at rank 0,
//               from the barrier that starts the run to the last receive.
// Prints mbm_protocol.hpp's lines (mpi_lat_us, mpi_thru_mbs) for mbm-bench to collect.
//
//   mpirun -n 2 build/bin/mbm-bench-mpi [--quick]   # mbm-bench runs it so
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "tools/bench/mbm_protocol.hpp"

namespace {

namespace mbm = iso::bench::mbm;
using clock_type = std::chrono::steady_clock;

double micros(clock_type::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

// Rank 1's view: one-way latency in microseconds over `round_trips` ping-pongs.
double latency(int rank, int size, int round_trips) {
  std::vector<char> out(static_cast<std::size_t>(size), 0x5a);
  std::vector<char> in(static_cast<std::size_t>(size));
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = clock_type::now();
  for (int i = 0; i < round_trips; ++i) {
    if (rank == 1) {
      MPI_Send(out.data(), size, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
      MPI_Recv(in.data(), size, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(in.data(), size, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(in.data(), size, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
    }
  }
  return micros(clock_type::now() - start) / (2.0 * round_trips);
}

// Rank 0's view: MB/s of a one-way stream of `bytes` in messages of `size`.
double throughput(int rank, int size, std::size_t bytes) {
  const std::size_t count = bytes / static_cast<std::size_t>(size);
  std::vector<char> buffer(static_cast<std::size_t>(size), 0x33);
  MPI_Barrier(MPI_COMM_WORLD);
  double mbps = 0;
  if (rank == 1) {
    for (std::size_t i = 0; i < count; ++i) {
      MPI_Send(buffer.data(), size, MPI_CHAR, 0, 2, MPI_COMM_WORLD);
    }
  } else {
    const auto start = clock_type::now();
    for (std::size_t i = 0; i < count; ++i) {
      MPI_Recv(buffer.data(), size, MPI_CHAR, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    mbps = static_cast<double>(count * static_cast<std::size_t>(size)) /
           micros(clock_type::now() - start);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return mbps;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int ranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const bool quick = argc == 2 && std::strcmp(argv[1], "--quick") == 0;
  if (ranks != 2 || (argc > 1 && !quick)) {
    if (rank == 0) std::fprintf(stderr, "usage: mpirun -n 2 mbm-bench-mpi [--quick]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const mbm::run_shape& shape = quick ? mbm::kQuick : mbm::kFull;
  for (int size : mbm::kSizes) (void)latency(rank, size, mbm::warmup_round_trips(shape));
  for (int rep = 0; rep < shape.repetitions; ++rep) {
    for (int size : mbm::kSizes) {
      const double us = latency(rank, size, shape.round_trips);
      if (rank == 1) std::printf("mpi_lat_us %d %.4f\n", size, us);
      const double mbps = throughput(rank, size, shape.stream_bytes);
      if (rank == 0) std::printf("mpi_thru_mbs %d %.2f\n", size, mbps);
      std::fflush(stdout);
    }
  }
  MPI_Finalize();
  return 0;
}
