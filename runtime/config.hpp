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
  const char* name;         // environment variable: ISO_<NAME>
  const char* unit;
  const char* help;
  std::string value;        // effective value, as text
};

// Copies `requested` and overrides each setting whose ISO_<NAME> variable is set.
// InvalidArgument names the variable and its bad value.
absl::StatusOr<options> apply_environment(const options& requested);

// One row per setting with its effective value.
std::vector<config_row> describe(const options& opts);

}  // namespace iso::runtime
