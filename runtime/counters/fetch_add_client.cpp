#include "runtime/counters/fetch_add_client.hpp"

#include <cstring>

#include "absl/strings/str_format.h"
#include "base/check.hpp"
#include "nicfw/fetch_add_service.hpp"

namespace iso::runtime {

fetch_add_client::fetch_add_client(event_loop& loop) : loop_(loop) {
  constexpr nicfw::delivery_kind kKinds[] = {nicfw::kFetchAddResult};
  loop.add_unit(*this, kKinds, /*ends_rounds=*/false);
}

absl::StatusOr<std::uint32_t> fetch_add_client::fetch_add(comm::node_id owner,
                                                          std::uint64_t counter,
                                                          std::uint64_t delta) {
  const std::uint32_t nodes = loop_.nic().topo().nodes();
  if (owner >= nodes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "fetch_add on a counter of node %u: the job has nodes 0..%u", owner, nodes - 1));
  }
  std::uint32_t ticket;
  if (free_.empty()) {
    ticket = static_cast<std::uint32_t>(answers_.size());
    answers_.emplace_back();
    open_.push_back(false);
  } else {
    ticket = free_.back();
    free_.pop_back();
  }
  open_[ticket] = true;
  ++outstanding_;
  const nicfw::fetch_add_request request{.counter = counter, .delta = delta, .ticket = ticket};
  const comm::byte_span piece = std::as_bytes(std::span(&request, 1));
  if (absl::Status s = loop_.submit(nicfw::kFetchAddSubmission, owner, std::span(&piece, 1));
      !s.ok()) {
    open_[ticket] = false;
    free_.push_back(ticket);
    --outstanding_;
    return s;
  }
  return ticket;
}

std::uint64_t fetch_add_client::take(std::uint32_t ticket) {
  ISO_CHECK(ready(ticket)) << "fetch-and-add ticket " << ticket << " is not answered";
  const std::uint64_t before = *answers_[ticket];
  answers_[ticket].reset();
  open_[ticket] = false;
  free_.push_back(ticket);
  return before;
}

void fetch_add_client::on_delivery(const nicfw::delivery& d) {
  nicfw::fetch_add_result result;
  if (d.payload.size() == sizeof(result)) std::memcpy(&result, d.payload.data(), sizeof(result));
  if (d.payload.size() != sizeof(result) || result.ticket >= open_.size() ||
      !open_[result.ticket] || answers_[result.ticket].has_value()) {
    loop_.fail(absl::InvalidArgumentError(absl::StrFormat(
        "fetch-and-add answer of %u bytes from node %u answers no request of this node",
        d.payload.size(), d.source)));
    return;
  }
  answers_[result.ticket] = result.before;
  --outstanding_;
}

}  // namespace iso::runtime
