// What the benchmark workers (ours and the MPI peer) print, one result per line, for the
// driver to collect:
//   lat <bytes> <median_us> <min_us> <max_us>     one-way latency (half a round trip)
//   bw  <bytes> <median_MBps> <min> <max> <median_Mmsgs>
#pragma once

#include <cstddef>

namespace iso::bench {

// Sizes measured by both sides, so that every row has a peer figure.
inline constexpr std::size_t kLatencySizes[] = {8, 64, 256, 1024, 4096};
inline constexpr std::size_t kBandwidthSizes[] = {8, 64, 1024, 4096, 16384};
inline constexpr int kRepetitions = 9;

}  // namespace iso::bench
