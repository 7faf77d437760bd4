// The isotach time service: this node's SIU and the token managers it hosts, as a NIC
// service. It stamps the host's isochrons and sends their parts (iso_data), returns
// isochron markers, exchanges tokens, demands, park and unpark with the other SIUs and
// TMs, and once a pulse is closed here hands the host its end-of-pulse marker (EOP),
// counting what was delivered for it (Regehr, sections 3.1 and 3.3).
//
// The engine drives its rounds: besides the nic_service calls it asks for owed tokens at
// the start and end of a round, tells it the host's demand, and reads its logical time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "nicfw/outbound.hpp"
#include "nicfw/service.hpp"
#include "nicfw/siu.hpp"
#include "nicfw/token_manager.hpp"

namespace iso::nicfw {

class isotach_time_service final : public nic_service {
 public:
  static const service_binding kBinding;

  isotach_time_service(nic_context& nic, outbound& out);

  [[nodiscard]] absl::Status on_packet(comm::node_id source, const packet_header& header,
                                       comm::byte_span body) override;
  [[nodiscard]] absl::Status on_fragment(comm::node_id source,
                                         const packet_header& header) override;
  [[nodiscard]] absl::Status on_submission(const submission& s, bool& taken) override;
  [[nodiscard]] absl::Status after_submissions(bool& did_work) override;
  // The host's demand, then the packets this node sent itself with the SIU and TMs
  // advancing between them, then the EOPs of the pulses that closed.
  [[nodiscard]] absl::Status poll(bool& did_work) override;

  // Host -> NIC: someone needs logical time to reach `pulse` (taken on the next poll).
  void note_host_demand(std::uint64_t pulse) { host_demand_ = pulse; }
  // Tokens the SIU held back (siu::remote_tokens::next_round).
  [[nodiscard]] absl::Status send_owed_tokens(bool& did_work) {
    return siu_.send_owed_tokens(did_work);
  }
  [[nodiscard]] bool owes_tokens() const { return siu_.owes_tokens(); }
  // The NIC is about to sleep (siu::rest).
  [[nodiscard]] absl::Status rest(bool& did_work) { return siu_.rest(did_work); }
  [[nodiscard]] std::uint64_t want() const { return siu_.want(); }
  [[nodiscard]] std::uint64_t pulse() const { return siu_.pulse(); }
  [[nodiscard]] std::uint64_t stamp_base() const { return siu_.stamp_base(); }
  [[nodiscard]] std::uint64_t closed() const { return siu_.closed(); }
  // False while the SIU is parked or waiting for its unpark to be answered.
  [[nodiscard]] bool may_stamp() const { return siu_.may_stamp(); }
  [[nodiscard]] bool unparking() const { return siu_.unparking(); }

 private:
  [[nodiscard]] absl::Status on_token(const packet_header& header, comm::node_id source,
                                      comm::byte_span body);
  // The hosted TM a packet from `source` is addressed to (header.to_switch), or an error
  // naming the packet (`what`) when this NIC hosts no TM for that switch.
  [[nodiscard]] absl::StatusOr<token_manager*> tm_for(const packet_header& header,
                                                      comm::node_id source, const char* what);
  [[nodiscard]] absl::Status run_loopback(bool& did_work);
  // One more item to announce in `pulse`'s EOP.
  void count_delivery(std::uint64_t pulse);
  void release_closed_pulses();

  nic_context& nic_;
  const outbound& out_;  // only to see whether loopback packets wait
  comm::node_id self_;
  const topology& topo_;
  siu siu_;
  std::vector<std::unique_ptr<token_manager>> tms_;
  std::uint64_t host_demand_ = 0;
  // Items delivered per pulse that awaits its EOP, in pulse order (a vector: a handful of
  // pulses are open at a time, and the queue's storage is reused).
  std::vector<std::pair<std::uint64_t, std::uint32_t>> delivered_per_pulse_;
  std::vector<delivery> markers_;  // isochron markers of this round's submissions
  std::size_t batch_ = 0;          // isochrons stamped this round
  bool parked_ = false;            // an isochron waits for the SIU to unpark
  std::vector<count_entry> scratch_counts_;
};

}  // namespace iso::nicfw
