// The table of runtime settings: one row per key (name, unit, help, how to read it from
// the environment and print it), so that documentation, environment overrides and
// `--print-config` cannot drift apart.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "iso/options.hpp"

namespace iso::runtime {

struct config_row {
  const char* name;  // environment variable: ISO_<NAME>
  const char* unit;
  const char* range;  // the values that work, e.g. "power of two, 1024 to 1073741824"
  const char* help;
  std::string value;  // effective value, as text
};

// Copies `requested`, overrides each setting whose ISO_<NAME> variable is set, and checks
// every value against its range. InvalidArgument names the variable (or the options field
// set in code), its bad value and the range.
absl::StatusOr<options> apply_environment(const options& requested);

// One row per setting with its effective value.
std::vector<config_row> describe(const options& opts);

}  // namespace iso::runtime
