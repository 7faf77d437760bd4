// The Open MPI peer of comm-bench: the same ping-pong and streaming patterns through
// MPI_Send/MPI_Recv (streaming: windows of MPI_Isend, as osu_bw does), printing the same
// lines as our worker.
#include <mpi.h>

#include <cstdio>
#include <vector>

#include "comm/bench/bench_protocol.hpp"

namespace {

void latency(int rank, std::size_t size) {
  using iso::bench::kRoundTrips;
  using iso::bench::kWarmup;
  std::vector<char> buffer(size, 7);
  const int peer = 1 - rank;
  const int n = static_cast<int>(size);
  {
    double start = MPI_Wtime();
    for (int i = 0; i < kWarmup + kRoundTrips; ++i) {
      if (i == kWarmup) start = MPI_Wtime();
      if (rank == 0) {
        MPI_Send(buffer.data(), n, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
        MPI_Recv(buffer.data(), n, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buffer.data(), n, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buffer.data(), n, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
      }
    }
    if (rank == 0)
      std::printf("lat %zu %.4f\n", size, (MPI_Wtime() - start) * 1e6 / kRoundTrips / 2);
  }
}

void bandwidth(int rank, std::size_t size) {
  constexpr int kWindow = 64;
  std::vector<char> buffer(size * kWindow, 9);
  char ack = 0;
  const int windows = iso::bench::bandwidth_messages(size) / kWindow;
  const int n = static_cast<int>(size);
  std::vector<MPI_Request> requests(kWindow);
  {
    const double start = MPI_Wtime();
    for (int w = 0; w < windows; ++w) {
      for (int i = 0; i < kWindow; ++i) {
        char* slot = buffer.data() + static_cast<std::size_t>(i) * size;
        if (rank == 0) {
          MPI_Isend(slot, n, MPI_CHAR, 1, 2, MPI_COMM_WORLD, &requests[i]);
        } else {
          MPI_Irecv(slot, n, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &requests[i]);
        }
      }
      MPI_Waitall(kWindow, requests.data(), MPI_STATUSES_IGNORE);
    }
    if (rank == 0) {
      MPI_Recv(&ack, 1, MPI_CHAR, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Send(&ack, 1, MPI_CHAR, 0, 3, MPI_COMM_WORLD);
    }
    const double seconds = MPI_Wtime() - start;
    const double total = static_cast<double>(windows) * kWindow;
    if (rank == 0)
      std::printf("bw %zu %.1f\n", size, total * static_cast<double>(size) / seconds / 1e6);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) std::fprintf(stderr, "comm-bench-mpi: run with exactly 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  for (int rep = 0; rep < iso::bench::kRepetitionsPerRound; ++rep) {
    for (std::size_t s : iso::bench::kLatencySizes) latency(rank, s);
    for (std::size_t s : iso::bench::kBandwidthSizes) bandwidth(rank, s);
  }
  std::fflush(stdout);
  MPI_Finalize();
  return 0;
}
