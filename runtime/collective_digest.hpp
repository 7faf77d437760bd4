// Digests of collective calls, so that nodes can tell at a barrier that they did not all
// make the same call with the same arguments (SPMD programs should; a bug or a per-node
// setting makes them differ, and the job would then go on with silently wrong addresses).
//
//   collective_digest d(collective_digest::kind::allocate);
//   d.add(count).add(width);
//   boot.barrier_arrive(d.value());
//
// The digest is FNV-1a over 64-bit words: stable across processes and builds (absl::Hash is
// seeded per process, so it cannot be compared between nodes).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "iso/options.hpp"
#include "nicfw/topology.hpp"

namespace iso::runtime {

class collective_digest {
 public:
  enum class kind : std::uint64_t {
    barrier = 1,
    allocate = 2,
    counter = 3,
    window = 4,
    ordered_group = 5,
    object = 6,
    end_of_job = 7,
  };

  explicit collective_digest(kind k) { add(static_cast<std::uint64_t>(k)); }

  collective_digest& add(std::uint64_t word) {
    for (int byte = 0; byte < 8; ++byte) {
      value_ ^= (word >> (8 * byte)) & 0xff;
      value_ *= kPrime;
    }
    return *this;
  }
  collective_digest& add(std::span<const std::uint32_t> words) {
    add(words.size());
    for (const std::uint32_t w : words) add(w);
    return *this;
  }

  // The size, then the bytes eight at a time (the last word padded with zeros).
  collective_digest& add(std::span<const std::byte> bytes) {
    add(bytes.size());
    for (std::size_t at = 0; at < bytes.size(); at += sizeof(std::uint64_t)) {
      std::uint64_t word = 0;
      std::memcpy(&word, bytes.data() + at, std::min(sizeof(word), bytes.size() - at));
      add(word);
    }
    return *this;
  }

  [[nodiscard]] std::uint64_t value() const { return value_; }

 private:
  static constexpr std::uint64_t kPrime = 0x100000001b3;
  std::uint64_t value_ = 0xcbf29ce484222325;  // FNV-1a offset basis
};

// What every node of a job must agree on from the start: the logical topology and the
// settings that change the layout of isotach memory or the wire protocol.
[[nodiscard]] std::uint64_t job_agreement_digest(const nicfw::topology& topo,
                                                 const iso::options& opts);

}  // namespace iso::runtime
