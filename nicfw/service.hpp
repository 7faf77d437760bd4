// NIC services: the protocols a NIC engine runs, each behind one interface, registered at
// start-up the way UCX registers active-message handlers. A service owns
//   - its packet types (packet_binding: a name, and whether the engine carries credits and
//     fragments for it),
//   - the host submissions of its kinds (submission_kind values),
//   - the deliveries it hands the host (delivery_kind values; the host's event loop routes
//     them to the unit that registered for them),
// and reaches the network and the host only through its nic_context. The engine polls the
// transport, checks each packet's header, and dispatches by type; it knows no protocol but
// the round structure of isotach time.
//
//   class counter_service final : public nic_service { ... };
//   auto counters = std::make_unique<counter_service>(nic.context());
//   nic.add_service(std::move(counters), {.packets = kCounterPackets, .submissions = kKinds});
//
// Built-in services: isotach time (isotach_time_service.hpp), plain unicast
// (unicast_service.hpp), credits (credit_service.hpp). Every call into a service comes from
// the NIC's thread (the host's thread in inline mode), one at a time.
#pragma once

#include <cstdint>
#include <span>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "comm/transport.hpp"
#include "nicfw/host_channel.hpp"
#include "nicfw/topology.hpp"
#include "nicfw/wire.hpp"

namespace iso::nicfw {

// One packet type a service owns.
struct packet_binding {
  packet_type type;
  const char* name;  // for error messages and counters
  // The packet carries the sender's freed credits right after its header (credit_ledger.hpp):
  // the engine writes them on send and takes them before the service sees the body.
  bool carries_credits = false;
  // A payload larger than a transport packet travels as fragments, in order; the service
  // sends and receives the whole.
  bool fragmented = false;
};

// What a service registers.
struct service_binding {
  std::span<const packet_binding> packets;
  std::span<const submission_kind> submissions;
  // poll() is called every round. Off for services that only react to packets and
  // submissions: a round is on the path of every hop, and idle calls add up.
  bool polled = false;
};

// What a service may ask of its NIC. Calls come from the NIC's thread only.
class nic_context {
 public:
  [[nodiscard]] virtual comm::node_id self() const = 0;
  [[nodiscard]] virtual const topology& topo() const = 0;
  // Sends `payload` after `header` to `destination` (this node too: it comes back through
  // the loopback queue in the same round). The type must be bound; a fragmented type's
  // payload may exceed one transport packet. Returns the packets sent. Back-pressure queues
  // the packet (never an error); errors are a broken transport or an unknown node.
  [[nodiscard]] virtual absl::StatusOr<std::uint32_t> send(comm::node_id destination,
                                                           packet_header header,
                                                           comm::byte_span payload) = 0;
  // Hands `d` to the host, after everything delivered before it; the NIC keeps what the
  // host queue has no room for.
  virtual void deliver(const delivery& d) = 0;
  // Handles the packets this node sent itself, in order, until none is left; sets
  // `progressed` when there was one.
  [[nodiscard]] virtual absl::Status handle_loopback(bool& progressed) = 0;

 protected:
  ~nic_context() = default;
};

class nic_service {
 public:
  virtual ~nic_service() = default;

  // A packet of one of the service's types from `source` (this node for loopback). Its
  // header was read and, in paranoid mode, checked; credits and fragments were handled as
  // its binding says. An error stops the NIC: name the packet and its sender.
  [[nodiscard]] virtual absl::Status on_packet(comm::node_id source, const packet_header& header,
                                               comm::byte_span body) = 0;

  // A fragment of a fragmented type's packet that is not its last (on_packet gets the
  // whole with the last): for services that count packets, not messages.
  [[nodiscard]] virtual absl::Status on_fragment(comm::node_id source,
                                                 const packet_header& header) {
    (void)source;
    (void)header;
    return absl::OkStatus();
  }

  // A host submission of one of the service's kinds. Leaving `taken` false keeps it in the
  // queue and ends this round's submissions (the service cannot take it yet: a parked SIU,
  // a full batch).
  [[nodiscard]] virtual absl::Status on_submission(const submission& s, bool& taken) {
    (void)s;
    taken = true;
    return absl::InternalError("this NIC service takes no submissions");
  }
  // After a round's submissions, when this service took any or declined one.
  [[nodiscard]] virtual absl::Status after_submissions(bool& did_work) {
    (void)did_work;
    return absl::OkStatus();
  }
  // Once per round, after the transport was polled, when the binding says `polled`;
  // services are polled in the order they were added. Sets did_work when it did anything.
  [[nodiscard]] virtual absl::Status poll(bool& did_work) {
    (void)did_work;
    return absl::OkStatus();
  }
};

}  // namespace iso::nicfw
