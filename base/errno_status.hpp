// absl::Status for failed system calls: the code follows errno, the message names what was
// being done and carries strerror.
//
//   if (::ftruncate(fd, size) != 0) return iso::base::errno_status("resize job segment");
#pragma once

#include <string_view>

#include "absl/status/status.h"

namespace iso::base {

// Reads errno now; call it right after the failing call.
absl::Status errno_status(std::string_view what);
absl::Status errno_status(std::string_view what, int error_number);

}  // namespace iso::base
