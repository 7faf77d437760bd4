// Numeric command-line arguments of the bundled applications: whole numbers only, checked
// against a range, never clamped.
#pragma once

#include <charconv>
#include <cstring>
#include <system_error>

namespace iso::apps {

// A whole number from 1 to `max`: digits only (no sign, no spaces), and nothing that
// overflows (strtol would clamp it silently). False, leaving `out` alone, otherwise.
inline bool parse_count(const char* text, long max, long& out) {
  const char* const end = text + std::strlen(text);
  long value = 0;
  const auto [ptr, ec] = std::from_chars(text, end, value);
  if (ec != std::errc() || ptr != end || value < 1 || value > max) return false;
  out = value;
  return true;
}

}  // namespace iso::apps
