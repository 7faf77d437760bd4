// The litmus tests shipped with iso-litmus: one .litmus file per test in a folder
// (share/iso/litmus beside the program's bin/), each named after its test.
#pragma once

#include <string>
#include <vector>

#include "tools/litmus/litmus_test.hpp"

namespace iso::litmus {

class catalogue {
 public:
  explicit catalogue(std::string folder);
  // The tests' names, sorted; empty when the folder holds none.
  [[nodiscard]] std::vector<std::string> names() const;
  // Appends to `out` the test `wanted`: a catalogue name, "all" (every test), or the path
  // of a .litmus file (it contains '/' or ends in .litmus). On failure sets `error` (an
  // unknown name lists the known ones; a malformed file gives file:line:column).
  bool load(const std::string& wanted, std::vector<test>& out, std::string& error) const;

 private:
  std::string folder_;
};

}  // namespace iso::litmus
