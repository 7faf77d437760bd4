// The FFT's checks, shared by the sequential and the parallel version.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "apps/common/report.hpp"
#include "apps/fft/fft_kernel.hpp"

namespace iso::apps::fft {

// The largest error the round trip may leave, relative to the largest input magnitude.
inline constexpr double kRoundTripBound = 1e-10;

// The input of 2^m points from `seed`, points [first, first + count).
[[nodiscard]] std::vector<cplx> make_input(std::uint64_t seed, std::size_t first,
                                           std::size_t count);

// x: the input; forward: its transform; back: the inverse of `forward`. Passes when the
// round trip returns x within kRoundTripBound and the checksum identity holds: the sum of
// all X[k] is n * x[0], whatever the input.
[[nodiscard]] check_result check_round_trip(std::span<const cplx> x, std::span<const cplx> forward,
                                            std::span<const cplx> back);

// The first point where `got` differs from `want` bit for bit, or a pass.
[[nodiscard]] check_result compare_exactly(std::span<const cplx> got, std::span<const cplx> want,
                                           const std::string& what);

}  // namespace iso::apps::fft
