#include "nicfw/isotach_time_service.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>

#include "absl/strings/str_format.h"
#include "base/check.hpp"

namespace iso::nicfw {
namespace {

// Isochrons stamped per batch, before the batch's token goes out. A stream of isochrons
// (the whole host queue, when the host issues faster than the NIC sends) would otherwise be
// one batch: receivers could close nothing, and so free no credits, until its end. With a
// cap the stream's pulses close while it flows (mbm-bench's isotach stream, for one, runs
// faster).
constexpr std::size_t kIsochronsPerBatch = 256;

constexpr packet_binding kPackets[] = {
    {.type = packet_type::iso_data,
     .name = "iso_data",
     .carries_credits = true,
     .fragmented = true},
    {.type = packet_type::siu_token, .name = "siu_token"},
    {.type = packet_type::tm_token, .name = "tm_token"},
    {.type = packet_type::link_token, .name = "link_token"},
    {.type = packet_type::demand, .name = "demand"},
    {.type = packet_type::park, .name = "park"},
    {.type = packet_type::unpark, .name = "unpark"},
    {.type = packet_type::unparked, .name = "unparked"},
};
constexpr submission_kind kSubmissions[] = {submission_kind::isochron};

}  // namespace

const service_binding isotach_time_service::kBinding{
    .packets = kPackets, .submissions = kSubmissions, .polled = true};

isotach_time_service::isotach_time_service(nic_context& nic, outbound& out)
    : nic_(nic), out_(out), self_(nic.self()), topo_(nic.topo()), siu_(self_, topo_, out) {
  for (std::uint32_t s : topo_.tms_hosted_by(self_)) {
    tms_.push_back(std::make_unique<token_manager>(s, self_, topo_, out));
    if (s == topo_.switch_of(self_)) {
      tms_.back()->attach_local_siu(siu_);
      siu_.attach_local_tm(*tms_.back());
    }
  }
}

absl::Status isotach_time_service::on_fragment(comm::node_id source, const packet_header& header) {
  if (source == self_) return absl::InvalidArgumentError("isotach packet from this node to itself");
  // Every fragment is a packet the sender counted (take on_submission).
  return siu_.on_iso_data(source, header.stamp);
}

absl::Status isotach_time_service::on_packet(comm::node_id source, const packet_header& header,
                                             comm::byte_span body) {
  switch (header.type) {
    case packet_type::iso_data: {
      if (absl::Status s = on_fragment(source, header); !s.ok()) return s;
      nic_.deliver({.kind = delivery_kind::iso_data,
                    .source = source,
                    .sequence = header.a,
                    .stamp = header.stamp,
                    .payload = body});
      count_delivery(header.stamp);
      return absl::OkStatus();
    }
    case packet_type::siu_token:
    case packet_type::tm_token:
    case packet_type::link_token:
    case packet_type::park:
      return on_token(header, source, body);
    case packet_type::unpark: {
      absl::StatusOr<token_manager*> tm = tm_for(header, source, "unpark");
      if (!tm.ok()) return tm.status();
      return (*tm)->on_unpark(source);
    }
    case packet_type::unparked: {
      const std::uint32_t my_switch = topo_.switch_of(self_);
      const std::vector<std::uint32_t> tm_nodes = topo_.tm_nodes(my_switch);
      if (header.a != my_switch ||
          std::find(tm_nodes.begin(), tm_nodes.end(), source) == tm_nodes.end()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "unparked from node %u for switch %u, which is not this node's TM", source, header.a));
      }
      siu_.on_unparked(header.stamp);
      return absl::OkStatus();
    }
    case packet_type::demand: {
      if (header.to_switch == kToSiu) {
        siu_.on_demand(header.stamp);
        return absl::OkStatus();
      }
      absl::StatusOr<token_manager*> tm = tm_for(header, source, "demand");
      if (!tm.ok()) return tm.status();
      return header.a == kNoSwitch ? (*tm)->on_siu_demand(source, header.stamp)
                                   : (*tm)->on_link_demand(header.a, header.stamp);
    }
    default:
      break;
  }
  return absl::InternalError(absl::StrFormat("%s packet from node %u reached isotach time",
                                             packet_type_name(header.type), source));
}

absl::Status isotach_time_service::on_submission(const submission& s, bool& taken) {
  taken = false;
  if (batch_ == kIsochronsPerBatch) return absl::OkStatus();
  if (!siu_.may_stamp()) {
    // Parked: ask the TM first; the isochron waits in the queue until the answer.
    parked_ = true;
    return absl::OkStatus();
  }
  taken = true;
  const std::uint64_t stamp = siu_.stamp(s.delta);
  for (const isochron_part& part : s.parts) {
    ISO_CHECK(part.destination < topo_.nodes() && part.destination != self_)
        << "isochron part for node " << part.destination;
    absl::StatusOr<std::uint32_t> sent = nic_.send(
        part.destination, {.type = packet_type::iso_data, .a = s.sequence, .stamp = stamp},
        part.operations);
    if (!sent.ok()) return sent.status();
    // Every fragment is a packet the receiver must see before closing the pulse.
    for (std::uint32_t i = 0; i < *sent; ++i) siu_.count_sent(part.destination);
  }
  ++batch_;
  // A run of isochrons stamped alike shares one marker: the host's cost per isochron
  // stays small when a stream of them is taken in one batch.
  if (!markers_.empty() && markers_.back().stamp == stamp &&
      markers_.back().sequence + markers_.back().count == s.sequence) {
    ++markers_.back().count;
  } else {
    markers_.push_back(
        {.kind = delivery_kind::marker, .sequence = s.sequence, .count = 1, .stamp = stamp});
  }
  return absl::OkStatus();
}

absl::Status isotach_time_service::after_submissions(bool& did_work) {
  batch_ = 0;
  if (!markers_.empty()) {
    // The token that counts the new packets goes right behind them (one for the whole
    // batch), before anything else: every receiver needs it to close their pulse.
    if (absl::Status s = siu_.advance(did_work, siu::remote_tokens::now); !s.ok()) return s;
    if (absl::Status s = siu_.send_owed_tokens(did_work); !s.ok()) return s;
    for (const delivery& marker : markers_) {
      nic_.deliver(marker);
      count_delivery(marker.stamp);
    }
    markers_.clear();
  }
  if (!parked_) return absl::OkStatus();
  parked_ = false;
  return siu_.request_unpark();
}

absl::Status isotach_time_service::poll(bool& did_work) {
  siu_.on_host_demand(host_demand_);
  if (absl::Status s = run_loopback(did_work); !s.ok()) return s;
  release_closed_pulses();
  return absl::OkStatus();
}

absl::Status isotach_time_service::run_loopback(bool& did_work) {
  // Bounded: each round either makes progress or ends, and tokens cannot multiply without
  // limit because every TM and SIU is lazy. The local SIU advances before the local TMs
  // decide: a TM that advanced first would send a token short of what this node's SIU was
  // about to allow, costing a whole extra token round for the pulse everyone waits on.
  for (int rounds = 0; rounds < 64; ++rounds) {
    bool progressed = false;
    auto drain = [&]() -> absl::Status {
      return out_.has_loopback() ? nic_.handle_loopback(progressed) : absl::OkStatus();
    };
    if (absl::Status s = drain(); !s.ok()) return s;
    if (absl::Status s = siu_.advance(progressed); !s.ok()) return s;
    if (absl::Status s = drain(); !s.ok()) return s;
    for (auto& tm : tms_) {
      if (absl::Status s = tm->advance(progressed); !s.ok()) return s;
    }
    if (!progressed) return absl::OkStatus();
    did_work = true;
  }
  return absl::OkStatus();
}

absl::StatusOr<token_manager*> isotach_time_service::tm_for(const packet_header& header,
                                                            comm::node_id source,
                                                            const char* what) {
  for (auto& tm : tms_) {
    if (tm->switch_index() == header.to_switch) return tm.get();
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("%s from node %u for switch %u, whose TM is not on node %u", what, source,
                      header.to_switch, self_));
}

absl::Status isotach_time_service::on_token(const packet_header& header, comm::node_id source,
                                            comm::byte_span body) {
  token_body tb;
  if (!read_at(body, 0, tb) ||
      body.size() != sizeof(tb) + std::size_t{tb.entries} * sizeof(count_entry)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "token from node %u has a malformed body of %u bytes", source, body.size()));
  }
  std::vector<count_entry>& counts = scratch_counts_;
  counts.resize(tb.entries);
  if (tb.entries != 0) {
    std::memcpy(counts.data(), body.data() + sizeof(tb), counts.size() * sizeof(count_entry));
  }
  if (header.type == packet_type::tm_token) {
    const std::uint32_t my_switch = topo_.switch_of(self_);
    if (header.a != my_switch || source != topo_.tm_serving(self_)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "TM token from node %u for switch %u; this node's TM is switch %u on node %u", source,
          header.a, my_switch, topo_.tm_serving(self_)));
    }
    for (const count_entry& e : counts) {
      if (e.destination != self_ || e.source >= topo_.nodes()) {
        return absl::InvalidArgumentError(
            absl::StrFormat("TM token from node %u counts pair %u->%u at node %u", source, e.source,
                            e.destination, self_));
      }
    }
    siu_.on_tm_token(header.stamp, tb.want, counts);
    return absl::OkStatus();
  }
  absl::StatusOr<token_manager*> tm = tm_for(header, source, "token");
  if (!tm.ok()) return tm.status();
  if (header.type == packet_type::siu_token) {
    return (*tm)->on_siu_token(source, header.stamp, tb.want, counts);
  }
  if (header.type == packet_type::park) return (*tm)->on_park(source, header.stamp, counts);
  return (*tm)->on_link_token(header.a, header.stamp, tb.want, counts);
}

void isotach_time_service::count_delivery(std::uint64_t pulse) {
  // Pulses are few and mostly arrive in order: search from the back.
  auto it = delivered_per_pulse_.end();
  while (it != delivered_per_pulse_.begin() && std::prev(it)->first >= pulse) --it;
  if (it != delivered_per_pulse_.end() && it->first == pulse) {
    ++it->second;
  } else {
    delivered_per_pulse_.insert(it, {pulse, 1});
  }
}

void isotach_time_service::release_closed_pulses() {
  const std::uint64_t closed = siu_.closed();
  auto it = delivered_per_pulse_.begin();
  for (; it != delivered_per_pulse_.end() && it->first <= closed; ++it) {
    nic_.deliver({.kind = delivery_kind::eop, .count = it->second, .stamp = it->first});
  }
  delivered_per_pulse_.erase(delivered_per_pulse_.begin(), it);
}

}  // namespace iso::nicfw
