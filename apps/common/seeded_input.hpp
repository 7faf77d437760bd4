// The sequence every application draws its input from, from a seed: splitmix64, fixed and
// portable, so that every node and the sequential version generate the same input.
#pragma once

#include <cstdint>

namespace iso::apps {

constexpr std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace iso::apps
