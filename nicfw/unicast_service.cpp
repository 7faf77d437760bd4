#include "nicfw/unicast_service.hpp"

namespace iso::nicfw {
namespace {

constexpr packet_binding kPackets[] = {
    {.type = packet_type::direct, .name = "direct", .carries_credits = true, .fragmented = true},
};
constexpr submission_kind kSubmissions[] = {submission_kind::direct};

}  // namespace

const service_binding unicast_service::kBinding{.packets = kPackets, .submissions = kSubmissions};

absl::Status unicast_service::on_packet(comm::node_id source, const packet_header& header,
                                        comm::byte_span body) {
  (void)header;
  nic_.deliver({.kind = delivery_kind::direct, .source = source, .payload = body});
  return absl::OkStatus();
}

absl::Status unicast_service::on_submission(const submission& s, bool& taken) {
  taken = true;
  const isochron_part& packet = s.parts[0];
  return nic_.send(packet.destination, {.type = packet_type::direct}, packet.operations).status();
}

}  // namespace iso::nicfw
