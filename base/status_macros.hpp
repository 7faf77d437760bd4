// The project's one pair of status-propagation macros (Debian 12's Abseil has none).
//
//   absl::Status open_all() {
//     ISO_RETURN_IF_ERROR(open_a());
//     ISO_ASSIGN_OR_RETURN(auto fd, open_b());
//     ...
//   }
#pragma once

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define ISO_RETURN_IF_ERROR(expr)                                 \
  do {                                                            \
    if (::absl::Status iso_status_ = (expr); !iso_status_.ok()) { \
      return iso_status_;                                         \
    }                                                             \
  } while (0)

#define ISO_STATUS_CONCAT_INNER(a, b) a##b
#define ISO_STATUS_CONCAT(a, b) ISO_STATUS_CONCAT_INNER(a, b)

#define ISO_ASSIGN_OR_RETURN(lhs, expr) \
  ISO_ASSIGN_OR_RETURN_IMPL(ISO_STATUS_CONCAT(iso_statusor_, __LINE__), lhs, expr)

#define ISO_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return std::move(tmp).status();  \
  lhs = std::move(tmp).value()
