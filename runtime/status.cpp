// node::status(): gathers the snapshot from the NIC (time, packet counts, backlogs), the
// credit ledger and the host-side queues.
#include "iso/status.hpp"

#include "iso/node.hpp"
#include "nicfw/wire.hpp"
#include "runtime/node_state.hpp"

namespace iso {
namespace {

credit_status credits_of(const nicfw::credit_ledger& ledger, node_id peer, nicfw::credit_class c) {
  credit_status out;
  out.in_flight = ledger.in_flight(peer, c);
  out.available = out.in_flight >= ledger.window() ? 0 : ledger.window() - out.in_flight;
  out.buffered = ledger.buffered(peer, c);
  out.peak_buffered = ledger.peak_buffered(peer, c);
  return out;
}

packet_tally tally(const std::uint64_t (&by_type)[nicfw::kPacketTypes]) {
  using nicfw::packet_type;
  auto at = [&](packet_type t) { return by_type[static_cast<int>(t)]; };
  packet_tally out;
  out.isotach = at(packet_type::iso_data);
  out.direct = at(packet_type::direct);
  for (packet_type t :
       {packet_type::siu_token, packet_type::tm_token, packet_type::link_token, packet_type::demand,
        packet_type::park, packet_type::unpark, packet_type::unparked}) {
    out.tokens += at(t);
  }
  out.credits = at(packet_type::credit) + at(packet_type::credit_request);
  return out;
}

}  // namespace

node_status node::status() const {
  detail::node_state& state = *state_;
  nicfw::engine& nic = state.nic();
  runtime::shared_memory_manager& smm = state.smm();
  const nicfw::credit_ledger& ledger = nic.credits();
  node_status out;
  out.id = id();
  out.nodes = count();
  out.diameter = nic.topo().diameter();
  out.pulse = nic.time().pulse;
  out.executed_pulse = smm.through();
  out.credit_window = ledger.window();
  out.nic_overflow = nic.overflow();
  out.notices_waiting = smm.notices().size();
  out.messages_waiting = state.messages_waiting();
  out.pulses_waiting = smm.pulses_waiting();
  out.direct_reads = smm.direct_reads();
  out.fabric = state.fabric().fabric;
  out.transport = state.fabric().transport;
  out.lanes = state.fabric().lanes;
  out.binding = state.binding();
  out.waiting = state.waiting();
  for (node_id p = 0; p < count(); ++p) {
    const nicfw::peer_counts counts = nic.counts(p);
    out.peers.push_back({.peer = p,
                         .isotach = credits_of(ledger, p, nicfw::credit_class::isotach),
                         .messages = credits_of(ledger, p, nicfw::credit_class::direct),
                         .send_backlog = counts.backlog,
                         .sent = tally(counts.packets_sent),
                         .received = tally(counts.packets_received)});
  }
  return out;
}

}  // namespace iso
