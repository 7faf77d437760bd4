// Logging for every layer: ISO_LOG(component, level, "format %d", args...).
//
//   ISO_LOG(comm, warn, "ring from node %u is full", src);
//   ISO_LOG(nicfw, debug, "pulse %u closed", pulse);
//
// Messages are lowercase and name the values they talk about. Levels at or below `info`
// are always compiled; `debug` and `trace` are compiled when ISO_MAX_LOG_LEVEL allows and
// printed only for components named in ISO_DEBUG (comma-separated prefixes, or `all`).
// Errors are never compiled out. A component is a dotted name (`nicfw.siu`), written
// as is: ISO_DEBUG=nicfw selects nicfw.siu, nicfw.tm and nicfw.credit; ISO_DEBUG=nicfw.tm
// only the token managers. The components that log at debug level:
//   nicfw.siu     pulses: each pulse a node closes, each token its SIU sends
//   nicfw.tm      tokens: each token a token manager sends, to whom, with how many counts
//   nicfw.credit  credits: a send that waits for credit, and each grant that arrives
//   runtime       a node's start and end, and why it failed
#pragma once

#include <string_view>

#include "absl/strings/str_format.h"

namespace iso::base {

enum class log_level : int { error = 0, warn = 1, info = 2, debug = 3, trace = 4 };

#ifndef ISO_MAX_LOG_LEVEL
#define ISO_MAX_LOG_LEVEL 4
#endif

// True when a message of `level` from `component` would be printed. Cheap after the first
// call for a component: the answer is cached per call site by ISO_LOG.
bool log_enabled(std::string_view component, log_level level);

// Writes one line to stderr: "iso[<node>] <level> <component>: <message>".
void log_write(std::string_view component, log_level level, std::string_view message);

// The node id shown in log lines of the calling thread; -1 (the default) shows none.
void set_log_node(int node);

// Number of error and warning lines written so far; tests fail on unexpected ones.
int log_error_count();
int log_warning_count();

}  // namespace iso::base

// Errors, warnings and info lines are always printed. For debug and trace, whether this
// call site's component is selected is decided once (ISO_DEBUG is read once per process)
// and kept in a static, so a disabled line costs a load and a branch.
#define ISO_LOG(component, level, ...)                                                      \
  do {                                                                                      \
    if constexpr (static_cast<int>(::iso::base::log_level::level) <= ISO_MAX_LOG_LEVEL) {   \
      constexpr ::iso::base::log_level iso_log_level_ = ::iso::base::log_level::level;      \
      bool iso_log_on_ = true;                                                              \
      if constexpr (iso_log_level_ > ::iso::base::log_level::info) {                        \
        static const bool iso_log_selected_ =                                               \
            ::iso::base::log_enabled(#component, iso_log_level_);                           \
        iso_log_on_ = iso_log_selected_;                                                    \
      }                                                                                     \
      if (iso_log_on_) {                                                                    \
        ::iso::base::log_write(#component, iso_log_level_, ::absl::StrFormat(__VA_ARGS__)); \
      }                                                                                     \
    }                                                                                       \
  } while (0)
