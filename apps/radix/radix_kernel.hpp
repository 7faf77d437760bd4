// The pieces of the radix sort that the sequential and the parallel version share.
//
// Least-significant-digit radix sort of 32-bit keys: one pass per digit of `radix_bits`
// bits. A pass counts the keys per digit value (the histogram), turns the counts into
// starting positions (an exclusive prefix), and moves each key to the next position of
// its digit, keeping the order of equal digits (stable), so after the last pass the keys
// are sorted. In the parallel version every node counts its own block, and the prefix
// runs over the per-node histograms: a key's position is the number of keys with a
// smaller digit anywhere, plus the keys with its digit on lower nodes, plus those before
// it on its own node.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "apps/common/report.hpp"

namespace iso::apps::radix {

// Key j of the input generated from `seed`.
[[nodiscard]] std::uint32_t input_key(std::uint64_t seed, std::uint64_t j);
[[nodiscard]] std::vector<std::uint32_t> make_input(std::uint64_t seed, std::size_t first,
                                                    std::size_t count);

// The digit of `key` in pass `pass`.
[[nodiscard]] inline std::uint32_t digit(std::uint32_t key, unsigned pass, unsigned radix_bits) {
  return (key >> (pass * radix_bits)) & ((1U << radix_bits) - 1);
}
[[nodiscard]] inline unsigned passes(unsigned radix_bits) {
  return (32 + radix_bits - 1) / radix_bits;
}

// counts[d]: the keys of `keys` with digit d in pass `pass` (counts has 2^radix_bits).
void count_digits(std::span<const std::uint32_t> keys, unsigned pass, unsigned radix_bits,
                  std::span<std::uint32_t> counts);

// Moves keys to out[next[digit]++] (stable), for every key in order.
void scatter(std::span<const std::uint32_t> keys, unsigned pass, unsigned radix_bits,
             std::span<std::uint32_t> next, std::span<std::uint32_t> out);

// Where some of one digit's keys go: `count` slots from `at` on.
struct run_part {
  std::uint32_t* at = nullptr;
  std::uint32_t count = 0;
};
inline constexpr std::size_t kPartsPerDigit = 3;

// As scatter, with each digit's run in up to kPartsPerDigit parts anywhere in memory:
// parts[kPartsPerDigit * d + i] for digit d, filled in order (count 0: no such part), their
// counts adding up to the keys of digit d. Stable: keys of one digit keep their order.
void scatter_parts(std::span<const std::uint32_t> keys, unsigned pass, unsigned radix_bits,
                   std::span<const run_part> parts);

// The whole sort, sequentially: `keys` sorted, using `scratch` (as large).
void sort(std::span<std::uint32_t> keys, std::span<std::uint32_t> scratch, unsigned radix_bits);

// An order-independent digest of a multiset of keys: equal for a permutation.
[[nodiscard]] std::uint64_t multiset_digest(std::span<const std::uint32_t> keys);

// Passes when `sorted` is in ascending order and has the digest of the input.
[[nodiscard]] check_result check_sorted(std::span<const std::uint32_t> sorted,
                                        std::uint64_t input_digest);

}  // namespace iso::apps::radix
