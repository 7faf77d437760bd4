#include "nicfw/fetch_add_service.hpp"

#include <cstring>

#include "absl/strings/str_format.h"

namespace iso::nicfw {
namespace {

constexpr auto kRequest = service_packet(kFetchAddNumbers, 0);
constexpr auto kReply = service_packet(kFetchAddNumbers, 1);

constexpr packet_binding kPackets[] = {
    {.type = kRequest, .name = "fetch_add_request"},
    {.type = kReply, .name = "fetch_add_reply"},
};
constexpr submission_kind kSubmissions[] = {kFetchAddSubmission};

}  // namespace

const service_binding fetch_add_service::kBinding{.packets = kPackets, .submissions = kSubmissions};

absl::Status fetch_add_service::apply(comm::node_id source, const fetch_add_request& request) {
  std::uint64_t before = 0;
  if (request.counter < placed_.size()) {
    before = placed_[request.counter].fetch_add(request.delta, std::memory_order_acq_rel);
  } else {
    std::uint64_t& value = counters_[request.counter];
    before = value;
    value += request.delta;
  }
  const fetch_add_result result{
      .counter = request.counter, .before = before, .ticket = request.ticket, .tag = request.tag};
  const comm::byte_span answer = std::as_bytes(std::span(&result, 1));
  if (source == nic_.self()) {
    nic_.deliver({.kind = kFetchAddResult, .source = source, .payload = answer});
    return absl::OkStatus();
  }
  return nic_.send(source, {.type = kReply}, answer).status();
}

absl::Status fetch_add_service::on_submission(const submission& s, bool& taken) {
  taken = true;
  const isochron_part& part = s.parts[0];
  fetch_add_request request;
  if (part.operations.size() != sizeof(request)) {
    return absl::InternalError(absl::StrFormat("fetch-and-add submission of %u bytes, not %u",
                                               part.operations.size(), sizeof(request)));
  }
  if (part.destination >= nic_.topo().nodes()) {
    return absl::InternalError(
        absl::StrFormat("fetch-and-add submission for node %u", part.destination));
  }
  std::memcpy(&request, part.operations.data(), sizeof(request));
  if (part.destination == nic_.self()) return apply(nic_.self(), request);
  return nic_.send(part.destination, {.type = kRequest}, part.operations).status();
}

absl::Status fetch_add_service::on_packet(comm::node_id source, const packet_header& header,
                                          comm::byte_span body) {
  const bool request = header.type == kRequest;
  const std::size_t expected = request ? sizeof(fetch_add_request) : sizeof(fetch_add_result);
  if (body.size() != expected) {
    return absl::InvalidArgumentError(
        absl::StrFormat("fetch-and-add %s from node %u has %u bytes of body, not %u",
                        request ? "request" : "reply", source, body.size(), expected));
  }
  if (source == nic_.self()) {
    return absl::InvalidArgumentError("fetch-and-add packet from this node to itself");
  }
  if (request) {
    fetch_add_request r;
    std::memcpy(&r, body.data(), sizeof(r));
    return apply(source, r);
  }
  nic_.deliver({.kind = kFetchAddResult, .source = source, .payload = body});
  return absl::OkStatus();
}

}  // namespace iso::nicfw
