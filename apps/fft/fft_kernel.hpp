// The pieces of the six-step FFT that the sequential and the parallel version share, so
// that both compute every row bit for bit alike (the parallel check compares exactly).
//
// Six-step (Bailey) FFT of n = rows * cols points, input x[j1 * cols + j2]:
//   1. transpose to cols x rows;  2. an FFT of length `rows` on each row;
//   3. multiply element (j2, k1) by w_n^(j2 k1);  4. transpose to rows x cols;
//   5. an FFT of length `cols` on each row;  6. transpose to cols x rows: X in natural order
// (X[k1 + rows * k2] is element (k2, k1)). Every step but the transposes works on whole
// rows, so a node that owns a block of rows needs no other data between transposes.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace iso::apps::fft {

using cplx = std::complex<double>;

// Point j of the input generated from `seed`: real and imaginary parts in [-1, 1).
[[nodiscard]] cplx input_point(std::uint64_t seed, std::uint64_t j);

// In-place radix-2 FFT (forward: exponent sign -1) of rows of one power-of-two length.
class row_fft {
 public:
  explicit row_fft(std::size_t length);
  void transform(std::span<cplx> row) const;
  [[nodiscard]] std::size_t length() const { return length_; }

 private:
  std::size_t length_;
  std::vector<cplx> roots_;  // w^k = exp(-2 pi i k / length), k < length / 2
  std::vector<std::uint32_t> reversed_;
};

// Step 2 and 3 on row j2 of the cols x rows matrix (`row` has `rows` points) of an n-point
// transform: the row FFT, then element k1 times w_n^(j2 k1).
void fft_and_twiddle(const row_fft& f, std::size_t n, std::size_t j2, std::span<cplx> row);

// Blocked transpose of a rows x cols row-major matrix into cols x rows.
void transpose(std::span<const cplx> in, std::size_t rows, std::size_t cols, std::span<cplx> out);

// The whole six-step forward transform of a rows x cols input, sequentially, into `out`
// (n points), using `scratch` (n points).
void six_step(std::span<const cplx> x, std::size_t rows, std::size_t cols, std::span<cplx> out,
              std::span<cplx> scratch);
[[nodiscard]] std::vector<cplx> six_step(std::span<const cplx> x, std::size_t rows,
                                         std::size_t cols);

// The inverse transform of `forward` (natural order) through the forward one:
// conj(six_step(conj(X))) / n, as a cols x rows input.
void inverse_six_step(std::span<const cplx> forward, std::size_t rows, std::size_t cols,
                      std::span<cplx> out, std::span<cplx> in, std::span<cplx> scratch);
[[nodiscard]] std::vector<cplx> inverse_six_step(std::span<const cplx> forward, std::size_t rows,
                                                 std::size_t cols);
// The element maps around the inverse's six-step, shared so that results agree bit for bit.
inline cplx before_inverse(cplx v) { return std::conj(v); }
inline cplx after_inverse(cplx v, std::size_t n) { return std::conj(v) / static_cast<double>(n); }

// n = 2^m as rows x cols with rows = 2^(m/2), cols = n / rows.
struct shape {
  std::size_t rows;
  std::size_t cols;
};
[[nodiscard]] inline shape shape_of(unsigned m) {
  const std::size_t rows = std::size_t{1} << (m / 2);
  return {rows, (std::size_t{1} << m) / rows};
}

}  // namespace iso::apps::fft
