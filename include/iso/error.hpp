// The exception the C++ API throws when a call cannot do what was asked: bad input (an
// invalid node id, a malformed configuration value) or a job that can no longer run (a
// peer died, a bootstrap timed out). The message names the offending value; code() gives
// the canonical category (the same codes as absl::StatusCode).
//
//   try { node.send(99, bytes); } catch (const iso::error& e) { std::cerr << e.what(); }
#pragma once

#include <stdexcept>
#include <string>

namespace iso {

enum class error_code : int {
  cancelled = 1,
  unknown = 2,
  invalid_argument = 3,
  deadline_exceeded = 4,
  not_found = 5,
  already_exists = 6,
  permission_denied = 7,
  resource_exhausted = 8,
  failed_precondition = 9,
  aborted = 10,
  out_of_range = 11,
  unimplemented = 12,
  internal = 13,
  unavailable = 14,
  data_loss = 15,
};

class error : public std::runtime_error {
 public:
  error(error_code code, const std::string& message) : std::runtime_error(message), code_(code) {}
  [[nodiscard]] error_code code() const noexcept { return code_; }

 private:
  error_code code_;
};

}  // namespace iso
