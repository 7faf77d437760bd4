#include "runtime/progress/credit_wait.hpp"

#include "absl/strings/str_format.h"

namespace iso::runtime {

absl::Status wait_for_credits(event_loop& loop, absl::Duration timeout,
                              absl::FunctionRef<bool()> has_credits, const char* what,
                              absl::FunctionRef<std::string()> also_stuck) {
  absl::StatusOr<bool> came = loop.wait_until(absl::Now() + timeout, has_credits);
  if (!came.ok()) return came.status();
  if (*came) return absl::OkStatus();
  std::string stuck = also_stuck();
  const nicfw::credit_ledger& credits = loop.nic().credits();
  for (comm::node_id n = 0; n < credits.nodes(); ++n) {
    for (auto c : {nicfw::credit_class::isotach, nicfw::credit_class::direct}) {
      const std::uint64_t flying = credits.in_flight(n, c);
      if (flying == 0) continue;
      absl::StrAppendFormat(&stuck, "%s node %u holds %u bytes of %s", stuck.empty() ? "" : ";", n,
                            flying,
                            c == nicfw::credit_class::isotach ? "isotach data" : "messages");
    }
  }
  return absl::DeadlineExceededError(absl::StrFormat(
      "%s from node %u: no flow-control credits came back within %s (a receiver is not "
      "executing or not receiving what it was sent):%s",
      what, loop.nic().self(), absl::FormatDuration(timeout), stuck));
}

}  // namespace iso::runtime
