#include "runtime/counters/fetch_add_client.hpp"

#include <cstring>

#include "absl/strings/str_format.h"
#include "base/check.hpp"

namespace iso::runtime {

fetch_add_client::fetch_add_client(event_loop& loop) : loop_(loop) {
  constexpr nicfw::delivery_kind kKinds[] = {nicfw::kFetchAddResult};
  loop.add_unit(*this, kKinds, /*ends_rounds=*/false);
}

namespace {
// The request's tag: where its answer goes.
constexpr std::uint32_t kToTicket = 0;
constexpr std::uint32_t kToSink = 1;
}  // namespace

absl::Status fetch_add_client::check_owner(comm::node_id owner) const {
  const std::uint32_t nodes = loop_.nic().topo().nodes();
  if (owner >= nodes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "fetch_add on a counter of node %u: the job has nodes 0..%u", owner, nodes - 1));
  }
  return absl::OkStatus();
}

absl::Status fetch_add_client::submit(comm::node_id owner,
                                      const nicfw::fetch_add_request& request) {
  const comm::byte_span piece = std::as_bytes(std::span(&request, 1));
  return loop_.submit(nicfw::kFetchAddSubmission, owner, std::span(&piece, 1));
}

absl::StatusOr<std::uint32_t> fetch_add_client::fetch_add(comm::node_id owner,
                                                          std::uint64_t counter,
                                                          std::uint64_t delta) {
  if (absl::Status s = check_owner(owner); !s.ok()) return s;
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
  if (absl::Status s =
          submit(owner, {.counter = counter, .delta = delta, .ticket = ticket, .tag = kToTicket});
      !s.ok()) {
    open_[ticket] = false;
    free_.push_back(ticket);
    --outstanding_;
    return s;
  }
  return ticket;
}

absl::Status fetch_add_client::fetch_add_to(comm::node_id owner, std::uint64_t counter,
                                            std::uint64_t delta, std::uint32_t destination) {
  ISO_CHECK(sink_) << "fetch_add_to without a sink";
  if (absl::Status s = check_owner(owner); !s.ok()) return s;
  return submit(owner, {.counter = counter, .delta = delta, .ticket = destination, .tag = kToSink});
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
  if (d.payload.size() == sizeof(result) && result.tag == kToSink && sink_) {
    sink_(result.ticket, result.before);
    return;
  }
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
