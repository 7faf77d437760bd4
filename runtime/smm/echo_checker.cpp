#include "runtime/smm/echo_checker.hpp"

#include "absl/strings/str_format.h"

namespace iso::runtime {

void echo_checker::expect(std::uint32_t sequence, std::uint32_t parts) {
  pending_[sequence] = {.parts_left = parts};
}

void echo_checker::marker(std::uint32_t sequence, std::uint64_t pulse) {
  auto it = pending_.find(sequence);
  if (it == pending_.end()) return;  // paranoid mode was off when it was issued
  it->second.pulse = pulse;
  it->second.marked = true;
}

absl::Status echo_checker::check(node_id from, std::uint32_t sequence, std::uint64_t pulse) {
  auto it = pending_.find(sequence);
  if (it == pending_.end() || !it->second.marked) {
    return absl::DataLossError(absl::StrFormat(
        "paranoid check: node %u echoed isochron %u of node %u, which has no part "
        "outstanding there%s",
        from, sequence, self_, it == pending_.end() ? "" : " (its marker has not come yet)"));
  }
  if (it->second.pulse != pulse) {
    return absl::DataLossError(absl::StrFormat(
        "paranoid check: node %u executed isochron %u of node %u at pulse %u, but the "
        "isochron marker said pulse %u",
        from, sequence, self_, pulse, it->second.pulse));
  }
  if (--it->second.parts_left == 0) pending_.erase(it);
  return absl::OkStatus();
}

}  // namespace iso::runtime
