// iso-start-mpi: the Open MPI peer of iso-start. A trivial program, timed from the driver's
// launch (ISO_START_LAUNCH_NS, steady_clock nanoseconds): rank 0 prints mpi_init_us when
// MPI_Init has returned and mpi_first_us when one MPI_Barrier has (the first moment both
// ranks are known to be up, as iso-start's first isochron is).
//
//   ISO_START_LAUNCH_NS=... mpirun -n 2 build/bin/iso-start-mpi   # iso-start runs it so
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const std::int64_t init_ns = now_ns();
  MPI_Barrier(MPI_COMM_WORLD);
  const std::int64_t first_ns = now_ns();
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* launch = std::getenv("ISO_START_LAUNCH_NS");
  if (rank == 0 && launch != nullptr) {
    const std::int64_t at = std::strtoll(launch, nullptr, 10);
    std::printf("mpi_init_us %.1f\nmpi_first_us %.1f\n", static_cast<double>(init_ns - at) / 1e3,
                static_cast<double>(first_ns - at) / 1e3);
    std::fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}
