#include "base/log.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"

namespace iso::base {
namespace {

thread_local int g_node = -1;  // per thread: inproc nodes share a process
std::atomic<int> g_errors{0};
std::atomic<int> g_warnings{0};

// ISO_DEBUG is read once; the selection is process-wide because stderr is.
const std::vector<std::string>& debug_selection() {
  static const std::vector<std::string> selection = [] {
    std::vector<std::string> out;
    if (const char* env = std::getenv("ISO_DEBUG")) {
      for (absl::string_view part : absl::StrSplit(env, ',', absl::SkipEmpty())) {
        out.emplace_back(part);
      }
    }
    return out;
  }();
  return selection;
}

constexpr std::string_view level_name(log_level level) {
  switch (level) {
    case log_level::error:
      return "error";
    case log_level::warn:
      return "warn";
    case log_level::info:
      return "info";
    case log_level::debug:
      return "debug";
    case log_level::trace:
      return "trace";
  }
  return "?";
}

}  // namespace

bool log_enabled(std::string_view component, log_level level) {
  if (level <= log_level::info) return true;
  // A selected prefix names whole components: "nicfw" selects "nicfw.siu", not "nicfwx".
  for (const std::string& selected : debug_selection()) {
    if (selected == "all" || component == selected ||
        (component.size() > selected.size() && component.substr(0, selected.size()) == selected &&
         component[selected.size()] == '.')) {
      return true;
    }
  }
  return false;
}

void log_write(std::string_view component, log_level level, std::string_view message) {
  if (level == log_level::error) g_errors.fetch_add(1, std::memory_order_relaxed);
  if (level == log_level::warn) g_warnings.fetch_add(1, std::memory_order_relaxed);
  std::string line;
  const int node = g_node;
  if (node >= 0) {
    line = absl::StrFormat("iso[%d] %s %s: %s\n", node, level_name(level), component, message);
  } else {
    line = absl::StrFormat("iso %s %s: %s\n", level_name(level), component, message);
  }
  // One write(2) per line keeps lines from different nodes whole in a shared terminal.
  [[maybe_unused]] ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
}

void set_log_node(int node) { g_node = node; }
int log_error_count() { return g_errors.load(std::memory_order_relaxed); }
int log_warning_count() { return g_warnings.load(std::memory_order_relaxed); }

}  // namespace iso::base
