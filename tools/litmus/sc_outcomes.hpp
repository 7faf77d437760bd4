// The outcomes of a litmus test that sequential consistency allows, by enumerating every
// interleaving of the processes' isochrons (each isochron atomic) on one memory.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "tools/litmus/litmus_test.hpp"

namespace iso::litmus {

// What one execution produced: every register of every process (in the order of
// process::registers) and the final value of every observed location.
struct outcome {
  std::vector<std::vector<std::int64_t>> registers;
  std::vector<std::int64_t> finals;  // in the order of test::observed_locations()
  bool operator<(const outcome& o) const {
    return std::tie(registers, finals) < std::tie(o.registers, o.finals);
  }
  bool operator==(const outcome& o) const = default;
};

// "0:r0=0 1:r0=1 x=2".
std::string format_outcome(const test& t, const outcome& o);
// Whether `o` satisfies the test's exists condition.
bool satisfies(const test& t, const outcome& o);
// Every outcome some interleaving produces.
std::set<outcome> sc_outcomes(const test& t);

}  // namespace iso::litmus
