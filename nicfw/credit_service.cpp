#include "nicfw/credit_service.hpp"

#include "absl/strings/str_format.h"

namespace iso::nicfw {
namespace {

constexpr packet_binding kPackets[] = {
    // The credits are the whole packet: the engine reads them like piggy-backed ones.
    {.type = packet_type::credit, .name = "credit", .carries_credits = true},
    {.type = packet_type::credit_request, .name = "credit_request"},
};

}  // namespace

const service_binding credit_service::kBinding{
    .packets = kPackets, .submissions = {}, .polled = true};

absl::Status credit_service::on_packet(comm::node_id source, const packet_header& header,
                                       comm::byte_span body) {
  if (header.type == packet_type::credit_request) {
    credits_.nic_on_request(source);
    return absl::OkStatus();
  }
  if (!body.empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("credit packet from node %u has %u bytes of body, not %u", source,
                        body.size() + sizeof(credit_info), sizeof(credit_info)));
  }
  return absl::OkStatus();
}

absl::Status credit_service::poll(bool& did_work) {
  (void)did_work;  // a credit packet answers work already counted
  // Freed bytes below the threshold wait for a data packet to ride on, or for a request
  // (which marks the ledger dirty again).
  if (!credits_.nic_take_dirty()) return absl::OkStatus();
  const comm::node_id self = nic_.self();
  // What this host freed of its own packets needs no packet.
  credits_.nic_grant(self, credits_.nic_report(self));
  for (comm::node_id peer = 0; peer < nic_.topo().nodes(); ++peer) {
    if (peer == self) continue;
    if (credits_.nic_take_request_due(peer)) {
      absl::Status s = nic_.send(peer, {.type = packet_type::credit_request}, {}).status();
      if (!s.ok()) return s;
    }
    if (credits_.nic_credit_due(peer)) {
      if (absl::Status s = nic_.send(peer, {.type = packet_type::credit}, {}).status(); !s.ok()) {
        return s;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace iso::nicfw
