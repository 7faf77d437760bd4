#include "apps/asp/asp_kernel.hpp"

#include <algorithm>

#include "apps/common/seeded_input.hpp"

namespace iso::apps::asp {

std::vector<std::int32_t> make_rows(std::size_t n, std::uint64_t seed, std::size_t first_row,
                                    std::size_t rows) {
  std::vector<std::int32_t> d(rows * n);
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t i = first_row + r;
    for (std::size_t j = 0; j < n; ++j) {
      // Each entry from its own position, so that any block of rows can be made alone.
      const std::uint64_t bits = splitmix64(seed * 0x100000001b3ULL + i * n + j);
      std::int32_t& entry = d[r * n + j];
      if (i == j) {
        entry = 0;
      } else if (bits % 4 == 0) {
        entry = static_cast<std::int32_t>(1 + (bits >> 8) % 100);
      } else {
        entry = kInfinity;
      }
    }
  }
  return d;
}

void relax(std::span<std::int32_t> rows, std::size_t n, std::span<const std::int32_t> row_k,
           std::size_t k) {
  const std::size_t count = rows.size() / n;
  for (std::size_t r = 0; r < count; ++r) {
    std::int32_t* row = rows.data() + r * n;
    const std::int32_t through = row[k];
    if (through >= kInfinity) continue;
    for (std::size_t j = 0; j < n; ++j) row[j] = std::min(row[j], through + row_k[j]);
  }
}

void solve(std::span<std::int32_t> d, std::size_t n) {
  std::vector<std::int32_t> row_k(n);
  for (std::size_t k = 0; k < n; ++k) {
    std::copy_n(d.begin() + static_cast<std::ptrdiff_t>(k * n), n, row_k.begin());
    relax(d, n, row_k, k);
  }
}

summary summarize(std::span<const std::int32_t> d) {
  summary s;
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const std::int32_t v : d) {
    h = (h ^ static_cast<std::uint32_t>(v)) * 0x100000001b3ULL;
    if (v < kInfinity) ++s.connected;
  }
  s.digest = h;
  return s;
}

}  // namespace iso::apps::asp
