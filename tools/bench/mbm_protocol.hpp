// What mbm-bench measures, shared by its isotach worker (mbm_bench.cpp) and its Open MPI
// peer (mbm_mpi_peer.cpp), so that every row compares the same sizes, counts and volumes.
// Both print one sample per line for the driver:
//   <model>_lat_us <bytes> <microseconds>   one-way latency (half the mean round trip)
//   <model>_thru_mbs <bytes> <MB/s>         streaming throughput at the receiver
// with <model> iso, noniso (ours) or mpi (the peer).
#pragma once

#include <cstddef>

namespace iso::bench::mbm {

inline constexpr int kSizes[] = {64, 128, 256, 512, 1024};
// Bytes streamed per throughput figure, in messages of one size.
inline constexpr std::size_t kStreamBytes = 4'000'000;

// How much one run measures; --quick (for tests) measures less.
struct run_shape {
  int repetitions;
  int round_trips;
  std::size_t stream_bytes;
};
inline constexpr run_shape kFull{3, 2000, kStreamBytes};
inline constexpr run_shape kQuick{1, 200, kStreamBytes / 20};

// Round trips of the warm-up at every size, before anything is timed.
constexpr int warmup_round_trips(const run_shape& shape) { return shape.round_trips / 10 + 1; }

}  // namespace iso::bench::mbm
