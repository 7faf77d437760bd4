// Plain unicast as a NIC service: a host's direct submission goes to its destination as
// one packet, or as fragments when it is larger than a transport packet, outside logical
// time; what arrives is handed to the host as a `direct` delivery. Pairs are FIFO. Flow
// control is the host's (credit_class::direct); the packets carry credits both ways.
#pragma once

#include "nicfw/service.hpp"

namespace iso::nicfw {

class unicast_service final : public nic_service {
 public:
  static const service_binding kBinding;

  explicit unicast_service(nic_context& nic) : nic_(nic) {}

  [[nodiscard]] absl::Status on_packet(comm::node_id source, const packet_header& header,
                                       comm::byte_span body) override;
  [[nodiscard]] absl::Status on_submission(const submission& s, bool& taken) override;

 private:
  nic_context& nic_;
};

}  // namespace iso::nicfw
