#include "apps/fft/fft_kernel.hpp"

#include <algorithm>
#include <bit>
#include <numbers>
#include <utility>

#include "apps/common/seeded_input.hpp"

namespace iso::apps::fft {
namespace {

double unit(std::uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-52 - 1.0;  // [-1, 1)
}

cplx root(std::size_t n, std::uint64_t k) {
  const double angle =
      -2.0 * std::numbers::pi * static_cast<double>(k % n) / static_cast<double>(n);
  return {std::cos(angle), std::sin(angle)};
}

constexpr std::size_t kTile = 32;

}  // namespace

cplx input_point(std::uint64_t seed, std::uint64_t j) {
  const std::uint64_t a = splitmix64(seed * 0x100000001b3ULL + 2 * j);
  const std::uint64_t b = splitmix64(seed * 0x100000001b3ULL + 2 * j + 1);
  return {unit(a), unit(b)};
}

row_fft::row_fft(std::size_t length) : length_(length), reversed_(length) {
  roots_.reserve(length / 2);
  for (std::size_t k = 0; k < length / 2; ++k) roots_.push_back(root(length, k));
  const int bits = std::countr_zero(length);
  for (std::size_t i = 0; i < length; ++i) {
    std::uint32_t r = 0;
    for (int b = 0; b < bits; ++b) r |= ((i >> b) & 1U) << (bits - 1 - b);
    reversed_[i] = r;
  }
}

void row_fft::transform(std::span<cplx> row) const {
  for (std::size_t i = 0; i < length_; ++i) {
    if (i < reversed_[i]) std::swap(row[i], row[reversed_[i]]);
  }
  for (std::size_t half = 1; half < length_; half *= 2) {
    const std::size_t stride = length_ / (2 * half);
    for (std::size_t start = 0; start < length_; start += 2 * half) {
      for (std::size_t k = 0; k < half; ++k) {
        const cplx w = roots_[k * stride];
        const cplx a = row[start + k];
        const cplx b = row[start + k + half];
        // Written out: std::complex's operator* checks for infinities (slow, and no
        // different for finite data).
        const cplx wb(w.real() * b.real() - w.imag() * b.imag(),
                      w.real() * b.imag() + w.imag() * b.real());
        row[start + k] = a + wb;
        row[start + k + half] = a - wb;
      }
    }
  }
}

void fft_and_twiddle(const row_fft& f, std::size_t n, std::size_t j2, std::span<cplx> row) {
  f.transform(row);
  for (std::size_t k1 = 1; k1 < row.size(); ++k1) {
    const cplx w = root(n, static_cast<std::uint64_t>(j2) * k1);
    const cplx v = row[k1];
    row[k1] =
        cplx(w.real() * v.real() - w.imag() * v.imag(), w.real() * v.imag() + w.imag() * v.real());
  }
}

void transpose(std::span<const cplx> in, std::size_t rows, std::size_t cols, std::span<cplx> out) {
  for (std::size_t r0 = 0; r0 < rows; r0 += kTile) {
    for (std::size_t c0 = 0; c0 < cols; c0 += kTile) {
      const std::size_t r1 = std::min(rows, r0 + kTile);
      const std::size_t c1 = std::min(cols, c0 + kTile);
      for (std::size_t r = r0; r < r1; ++r) {
        for (std::size_t c = c0; c < c1; ++c) out[c * rows + r] = in[r * cols + c];
      }
    }
  }
}

void six_step(std::span<const cplx> x, std::size_t rows, std::size_t cols, std::span<cplx> out,
              std::span<cplx> scratch) {
  const std::size_t n = rows * cols;
  transpose(x, rows, cols, out);  // cols x rows
  const row_fft by_rows(rows);
  for (std::size_t j2 = 0; j2 < cols; ++j2) {
    fft_and_twiddle(by_rows, n, j2, out.subspan(j2 * rows, rows));
  }
  transpose(out, cols, rows, scratch);  // rows x cols
  const row_fft by_cols(cols);
  for (std::size_t k1 = 0; k1 < rows; ++k1) by_cols.transform(scratch.subspan(k1 * cols, cols));
  transpose(scratch, rows, cols, out);  // cols x rows: natural order
}

std::vector<cplx> six_step(std::span<const cplx> x, std::size_t rows, std::size_t cols) {
  std::vector<cplx> out(x.size());
  std::vector<cplx> scratch(x.size());
  six_step(x, rows, cols, out, scratch);
  return out;
}

void inverse_six_step(std::span<const cplx> forward, std::size_t rows, std::size_t cols,
                      std::span<cplx> out, std::span<cplx> in, std::span<cplx> scratch) {
  std::transform(forward.begin(), forward.end(), in.begin(), before_inverse);
  six_step(in, cols, rows, out, scratch);
  for (cplx& v : out) v = after_inverse(v, out.size());
}

std::vector<cplx> inverse_six_step(std::span<const cplx> forward, std::size_t rows,
                                   std::size_t cols) {
  std::vector<cplx> out(forward.size());
  std::vector<cplx> in(forward.size());
  std::vector<cplx> scratch(forward.size());
  inverse_six_step(forward, rows, cols, out, in, scratch);
  return out;
}

}  // namespace iso::apps::fft
