#include "base/errno_status.hpp"

#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"

namespace iso::base {

absl::Status errno_status(std::string_view what) { return errno_status(what, errno); }

absl::Status errno_status(std::string_view what, int error_number) {
  return absl::Status(absl::ErrnoToStatusCode(error_number),
                      absl::StrFormat("%s: %s", what, std::strerror(error_number)));
}

}  // namespace iso::base
