// Command line of isorun: `isorun -n N [--transport shm|inproc] [--timeout S] [--tag-output]
// [--] program args...`. Parsing stops at the first non-option, so the program's own
// arguments are never taken for isorun's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace iso::isorun {

enum class transport_kind { shm, inproc };

struct options {
  int nodes = 0;
  transport_kind transport = transport_kind::shm;
  std::optional<absl::Duration> timeout;
  bool tag_output = false;
  // --bind: the nodes' ISO_BIND (auto, core or none), over the environment's; unset: as
  // the environment says.
  std::optional<std::string> binding;
  std::vector<std::string> command;  // program, then its arguments
};

struct parse_result {
  enum class action { run, help, print_config, usage_error };
  action what = action::usage_error;
  options opts;
  std::string error;  // one line, without the "isorun: " prefix; set for usage_error
};

inline constexpr int kMaxNodes = 4096;

parse_result parse_options(int argc, char** argv);

// The usage text, ending in a newline; documents the environment the nodes see.
const char* usage_text();

}  // namespace iso::isorun
