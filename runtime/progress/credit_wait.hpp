// Waiting for flow-control credits (nicfw/credit_ledger.hpp), shared by everything that
// sends into another node's buffers: isochrons, queued messages, plain messages.
#pragma once

#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "runtime/progress/event_loop.hpp"

namespace iso::runtime {

// Makes progress until `has_credits()`. DeadlineExceeded after `timeout`, naming `what`
// (the kind of send) and every peer that holds this node's credits, after `also_stuck()`
// (what the caller holds back itself, or empty).
[[nodiscard]] absl::Status wait_for_credits(event_loop& loop, absl::Duration timeout,
                                            absl::FunctionRef<bool()> has_credits, const char* what,
                                            absl::FunctionRef<std::string()> also_stuck);

}  // namespace iso::runtime
