// Paranoid mode's end-to-end check of logical time: every node that executes a remote
// part of an isochron echoes the pulse it executed it at, and the issuer compares each
// echo with the pulse its NIC's isochron marker promised. A mismatch means the isotach
// invariant broke somewhere between the two SIUs.
#pragma once

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "runtime/smm/node_id.hpp"

namespace iso::runtime {

class echo_checker {
 public:
  explicit echo_checker(node_id self) : self_(self) {}

  // Isochron `sequence` was issued with `parts` remote parts.
  void expect(std::uint32_t sequence, std::uint32_t parts);
  // Its marker: it executes at `pulse`.
  void marker(std::uint32_t sequence, std::uint64_t pulse);
  // Node `from` executed its part at `pulse`. DataLoss naming the isochron, the node and
  // both pulses when they differ, or when no such part is outstanding.
  [[nodiscard]] absl::Status check(node_id from, std::uint32_t sequence, std::uint64_t pulse);
  [[nodiscard]] std::size_t outstanding() const { return pending_.size(); }

 private:
  struct expectation {
    std::uint32_t parts_left = 0;
    std::uint64_t pulse = 0;
    bool marked = false;
  };
  node_id self_;
  absl::flat_hash_map<std::uint32_t, expectation> pending_;
};

}  // namespace iso::runtime
