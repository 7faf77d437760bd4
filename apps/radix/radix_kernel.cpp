#include "apps/radix/radix_kernel.hpp"

#include <algorithm>
#include <utility>

#include "apps/common/seeded_input.hpp"

namespace iso::apps::radix {

std::uint32_t input_key(std::uint64_t seed, std::uint64_t j) {
  return static_cast<std::uint32_t>(splitmix64(seed * 0x100000001b3ULL + j) >> 32);
}

std::vector<std::uint32_t> make_input(std::uint64_t seed, std::size_t first, std::size_t count) {
  std::vector<std::uint32_t> keys(count);
  for (std::size_t j = 0; j < count; ++j) keys[j] = input_key(seed, first + j);
  return keys;
}

void count_digits(std::span<const std::uint32_t> keys, unsigned pass, unsigned radix_bits,
                  std::span<std::uint32_t> counts) {
  std::fill(counts.begin(), counts.end(), 0U);
  for (const std::uint32_t k : keys) ++counts[digit(k, pass, radix_bits)];
}

void scatter(std::span<const std::uint32_t> keys, unsigned pass, unsigned radix_bits,
             std::span<std::uint32_t> next, std::span<std::uint32_t> out) {
  for (const std::uint32_t k : keys) out[next[digit(k, pass, radix_bits)]++] = k;
}

void scatter_parts(std::span<const std::uint32_t> keys, unsigned pass, unsigned radix_bits,
                   std::span<const run_part> parts) {
  // Where each digit's next key goes, and where its current part ends.
  std::vector<std::uint32_t*> at(std::size_t{1} << radix_bits);
  std::vector<std::uint32_t*> end(at.size());
  std::vector<std::uint32_t> part(at.size());  // the index in `parts` of the next part
  // Moves digit `d` on to its next part that has room (none: the counts ruled out a key
  // more, and the cursor stays at an end no key reaches).
  auto next_part = [&](std::size_t d) {
    const std::size_t last = (d + 1) * kPartsPerDigit;
    while (part[d] < last && parts[part[d]].count == 0) ++part[d];
    if (part[d] == last) return;
    at[d] = parts[part[d]].at;
    end[d] = at[d] + parts[part[d]].count;
    ++part[d];
  };
  for (std::size_t d = 0; d < at.size(); ++d) {
    part[d] = static_cast<std::uint32_t>(d * kPartsPerDigit);
    next_part(d);
  }
  for (const std::uint32_t k : keys) {
    const std::uint32_t d = digit(k, pass, radix_bits);
    *at[d]++ = k;
    if (at[d] == end[d]) [[unlikely]] {
      next_part(d);
    }
  }
}

void sort(std::span<std::uint32_t> keys, std::span<std::uint32_t> scratch, unsigned radix_bits) {
  std::vector<std::uint32_t> counts(std::size_t{1} << radix_bits);
  std::span<std::uint32_t> from = keys;
  std::span<std::uint32_t> to = scratch;
  for (unsigned pass = 0; pass < passes(radix_bits); ++pass) {
    count_digits(from, pass, radix_bits, counts);
    std::uint32_t sum = 0;
    for (std::uint32_t& c : counts) sum += std::exchange(c, sum);
    scatter(from, pass, radix_bits, counts, to);
    std::swap(from, to);
  }
  if (from.data() != keys.data()) std::copy(from.begin(), from.end(), keys.begin());
}

std::uint64_t multiset_digest(std::span<const std::uint32_t> keys) {
  std::uint64_t sum = 0;
  for (const std::uint32_t k : keys) sum += splitmix64(k);
  return sum;
}

check_result check_sorted(std::span<const std::uint32_t> sorted, std::uint64_t input_digest) {
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i - 1] > sorted[i]) {
      return {false, format("not sorted: key %zu is %u, key %zu is %u", i - 1, sorted[i - 1], i,
                            sorted[i])};
    }
  }
  const std::uint64_t digest = multiset_digest(sorted);
  if (digest != input_digest) {
    return {false, format("sorted, but not a permutation of the input: digest %016llx, the "
                          "input's %016llx",
                          static_cast<unsigned long long>(digest),
                          static_cast<unsigned long long>(input_digest))};
  }
  return {true, format("sorted; a permutation of the input (digest %016llx)",
                       static_cast<unsigned long long>(digest))};
}

}  // namespace iso::apps::radix
