// What the benchmark workers (ours and the MPI peer) do and print, one sample per line, for
// the driver to collect:
//   lat <bytes> <microseconds>   one-way latency (half the mean round trip of a run)
//   bw  <bytes> <MB/s>           streaming throughput of a run
// Each worker round runs every size once per repetition (sizes interleaved, so that a bad
// moment of the machine does not land on one size only); the driver alternates rounds of
// ours and the peer's and reports the median and spread of all samples.
#pragma once

#include <cstddef>

namespace iso::bench {

// Sizes measured by both sides, so that every row has a peer figure.
inline constexpr std::size_t kLatencySizes[] = {8, 64, 256, 1024, 4096};
inline constexpr std::size_t kBandwidthSizes[] = {8, 64, 1024, 4096, 16384};
inline constexpr int kRepetitionsPerRound = 3;
inline constexpr int kRounds = 3;
inline constexpr int kWarmup = 20000;
inline constexpr int kRoundTrips = 100000;

// Enough messages per run for ~32 MiB of payload, and never fewer than 20000.
constexpr int bandwidth_messages(std::size_t size) {
  const std::size_t by_volume = (std::size_t{32} << 20) / size;
  return static_cast<int>(by_volume < 20000 ? 20000 : by_volume);
}

}  // namespace iso::bench
