// Credits as a NIC service: the explicit credit packets and credit requests of the flow
// control in credit_ledger.hpp. Freed counts mostly ride on data packets (the engine writes
// and reads them for every type bound with carries_credits); this service sends them alone
// when a quarter of the window is unreported or a peer asked, and asks peers whose credits
// the host waits for.
#pragma once

#include "nicfw/credit_ledger.hpp"
#include "nicfw/service.hpp"

namespace iso::nicfw {

class credit_service final : public nic_service {
 public:
  static const service_binding kBinding;

  credit_service(nic_context& nic, credit_ledger& credits) : nic_(nic), credits_(credits) {}

  [[nodiscard]] absl::Status on_packet(comm::node_id source, const packet_header& header,
                                       comm::byte_span body) override;
  // Sends the credit packets and requests that are due.
  [[nodiscard]] absl::Status poll(bool& did_work) override;

 private:
  nic_context& nic_;
  credit_ledger& credits_;
};

}  // namespace iso::nicfw
