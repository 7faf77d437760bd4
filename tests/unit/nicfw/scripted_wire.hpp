// The wire around one isotach-time unit (an SIU or a TM) in its unit tests: a scripted
// transport that records every packet the unit sends, per destination, and hands the test's
// packets in through poll(), as the engine would. The unit talks to it through a real
// nicfw::outbound, so packets to the unit's own node go through outbound's loopback queue;
// sent_to() collects those too. Inbound packets are decoded and handed to the unit's
// methods without the engine's checks (the tests of the units play well-formed peers, or
// call the methods directly with what the engine would let through).
//
//   scripted_wire wire(topo, /*self=*/1);
//   siu s(1, topo, wire.out);
//   ASSERT_TRUE(wire.feed(s, 0, tm_token(0, 2, 10, {})).ok());
//   EXPECT_THAT(wire.stamps_to(0, packet_type::siu_token), ElementsAre(2u));
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <span>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "comm/transport.hpp"
#include "nicfw/outbound.hpp"
#include "nicfw/siu.hpp"
#include "nicfw/token_manager.hpp"
#include "nicfw/topology.hpp"
#include "nicfw/wire.hpp"

namespace iso::nicfw::scripted {

// A packet as the tests see it: header, and for tokens and parks their body and counts.
struct wire_packet {
  packet_header header{};
  token_body body{};
  std::vector<count_entry> counts;
};

// Count entries compare as (source, destination, count) triples.
using count_triple = std::tuple<std::uint32_t, std::uint32_t, std::uint64_t>;
inline std::vector<count_triple> triples(std::span<const count_entry> counts) {
  std::vector<count_triple> out;
  for (const count_entry& e : counts) out.emplace_back(e.source, e.destination, e.count);
  return out;
}

inline bool has_token_body(packet_type t) {
  return t == packet_type::siu_token || t == packet_type::tm_token ||
         t == packet_type::link_token || t == packet_type::park;
}

inline wire_packet decode(std::span<const std::byte> bytes) {
  wire_packet p;
  EXPECT_TRUE(read_at(bytes, 0, p.header)) << "packet of " << bytes.size() << " bytes";
  if (!has_token_body(p.header.type)) {
    EXPECT_EQ(bytes.size(), sizeof(packet_header)) << "a header-only packet has a body";
    return p;
  }
  EXPECT_TRUE(read_at(bytes, sizeof(packet_header), p.body));
  const std::size_t entries_at = sizeof(packet_header) + sizeof(token_body);
  EXPECT_EQ(bytes.size(), entries_at + std::size_t{p.body.entries} * sizeof(count_entry))
      << "token body and entry count disagree";
  for (std::uint32_t i = 0; i < p.body.entries; ++i) {
    count_entry e{};
    if (read_at(bytes, entries_at + i * sizeof(count_entry), e)) p.counts.push_back(e);
  }
  return p;
}

inline std::vector<std::byte> encode(const wire_packet& p) {
  std::vector<std::byte> out(sizeof(packet_header));
  std::memcpy(out.data(), &p.header, sizeof(packet_header));
  if (!has_token_body(p.header.type)) return out;
  token_body body = p.body;
  body.entries = static_cast<std::uint32_t>(p.counts.size());
  const auto* b = reinterpret_cast<const std::byte*>(&body);
  out.insert(out.end(), b, b + sizeof(body));
  const auto* c = reinterpret_cast<const std::byte*>(p.counts.data());
  out.insert(out.end(), c, c + p.counts.size() * sizeof(count_entry));
  return out;
}

// Packets as the SIU's and TMs' peers send them (wire.hpp gives the fields).
inline wire_packet token_packet(packet_type type, std::uint16_t to_switch, std::uint32_t a,
                                std::uint64_t token, std::uint64_t want,
                                std::vector<count_entry> counts) {
  return {.header = {.type = type, .to_switch = to_switch, .a = a, .stamp = token},
          .body = {.want = want},
          .counts = std::move(counts)};
}
inline wire_packet tm_token(std::uint32_t from_switch, std::uint64_t token, std::uint64_t want,
                            std::vector<count_entry> counts) {
  return token_packet(packet_type::tm_token, kToSiu, from_switch, token, want, std::move(counts));
}
inline wire_packet siu_token(std::uint16_t to_switch, comm::node_id from, std::uint64_t token,
                             std::uint64_t want, std::vector<count_entry> counts) {
  return token_packet(packet_type::siu_token, to_switch, from, token, want, std::move(counts));
}
inline wire_packet link_token(std::uint16_t to_switch, std::uint32_t from_switch,
                              std::uint64_t token, std::uint64_t want,
                              std::vector<count_entry> counts) {
  return token_packet(packet_type::link_token, to_switch, from_switch, token, want,
                      std::move(counts));
}
inline wire_packet park(std::uint16_t to_switch, comm::node_id from, std::uint64_t last_token,
                        std::vector<count_entry> counts) {
  return token_packet(packet_type::park, to_switch, from, last_token, 0, std::move(counts));
}
inline wire_packet header_only(packet_type type, std::uint16_t to_switch, std::uint32_t a,
                               std::uint64_t stamp) {
  return {.header = {.type = type, .to_switch = to_switch, .a = a, .stamp = stamp},
          .body = {},
          .counts = {}};
}
inline wire_packet siu_demand(std::uint16_t to_switch, std::uint64_t want) {
  return header_only(packet_type::demand, to_switch, kNoSwitch, want);
}
inline wire_packet demand_to_siu(std::uint32_t from_switch, std::uint64_t want) {
  return header_only(packet_type::demand, kToSiu, from_switch, want);
}
inline wire_packet iso_data(std::uint64_t stamp) {
  return header_only(packet_type::iso_data, kToSiu, 0, stamp);
}

// Hands a packet from `source` to the unit, as isotach_time_service routes it.
inline absl::Status hand_to(siu& s, comm::node_id source, const wire_packet& p) {
  switch (p.header.type) {
    case packet_type::tm_token:
      s.on_tm_token(p.header.stamp, p.body.want, p.counts);
      return absl::OkStatus();
    case packet_type::demand:
      s.on_demand(p.header.stamp);
      return absl::OkStatus();
    case packet_type::unparked:
      s.on_unparked(p.header.stamp);
      return absl::OkStatus();
    case packet_type::iso_data:
      return s.on_iso_data(source, p.header.stamp);
    default:
      ADD_FAILURE() << "an SIU gets no " << packet_type_name(p.header.type) << " packet";
      return absl::InternalError("not for an SIU");
  }
}
inline absl::Status hand_to(token_manager& tm, comm::node_id source, const wire_packet& p) {
  switch (p.header.type) {
    case packet_type::siu_token:
      return tm.on_siu_token(source, p.header.stamp, p.body.want, p.counts);
    case packet_type::link_token:
      return tm.on_link_token(p.header.a, p.header.stamp, p.body.want, p.counts);
    case packet_type::park:
      return tm.on_park(source, p.header.stamp, p.counts);
    case packet_type::unpark:
      return tm.on_unpark(source);
    case packet_type::demand:
      return p.header.a == kNoSwitch ? tm.on_siu_demand(source, p.header.stamp)
                                     : tm.on_link_demand(p.header.a, p.header.stamp);
    default:
      ADD_FAILURE() << "a TM gets no " << packet_type_name(p.header.type) << " packet";
      return absl::InternalError("not for a TM");
  }
}

// Records what is sent; poll() hands up what the test fed in, in order.
class scripted_transport : public comm::transport {
 public:
  scripted_transport(comm::node_id self, std::uint32_t size)
      : comm::transport(self, size), sent(size) {}

  [[nodiscard]] std::size_t max_packet_size() const override { return 64 * 1024; }
  absl::Status send(comm::node_id destination, std::span<const comm::byte_span> pieces) override {
    if (destination >= size()) return absl::InvalidArgumentError("no such node");
    std::vector<std::byte> bytes;
    for (const comm::byte_span& piece : pieces)
      bytes.insert(bytes.end(), piece.begin(), piece.end());
    sent[destination].push_back(std::move(bytes));
    return absl::OkStatus();
  }
  absl::Status poll(comm::packet_upcall upcall, std::size_t& handled, std::size_t budget) override {
    handled = 0;
    while (!inbound_.empty() && handled < budget) {
      comm::received_packet p = make_received(inbound_.front().source, inbound_.front().bytes, 0);
      upcall(p);
      inbound_.pop_front();
      ++handled;
    }
    return absl::OkStatus();
  }
  void wait(absl::Duration, absl::FunctionRef<bool()>) override {}
  void wake() override {}
  [[nodiscard]] comm::transport_counters counters() const override { return {}; }

  void feed(comm::node_id source, std::vector<std::byte> bytes) {
    inbound_.push_back({source, std::move(bytes)});
  }

  std::vector<std::vector<std::vector<std::byte>>> sent;  // per destination, in order

 protected:
  void release_held(comm::node_id, std::uint64_t) override {}

 private:
  struct inbound_packet {
    comm::node_id source;
    std::vector<std::byte> bytes;
  };
  std::deque<inbound_packet> inbound_;
};

class scripted_wire {
 public:
  scripted_wire(const topology& topo, comm::node_id self)
      : transport(self, topo.nodes()), out(transport, /*paranoid=*/false) {}

  // Feeds `p` from `source` in through the transport and hands it to `unit`.
  template <typename Unit>
  absl::Status feed(Unit& unit, comm::node_id source, const wire_packet& p) {
    transport.feed(source, encode(p));
    absl::Status result;
    std::size_t handled = 0;
    const absl::Status polled = transport.poll(
        [&](comm::received_packet& r) {
          const absl::Status s = hand_to(unit, r.source(), decode(r.bytes()));
          if (result.ok()) result = s;
        },
        handled, std::numeric_limits<std::size_t>::max());
    EXPECT_TRUE(polled.ok());
    EXPECT_EQ(handled, 1u);
    return result;
  }

  // Every packet sent to `destination` so far, in order (loopback included for this node).
  std::vector<wire_packet> sent_to(comm::node_id destination) {
    collect_loopback();
    std::vector<wire_packet> packets;
    for (const auto& bytes : transport.sent[destination]) packets.push_back(decode(bytes));
    return packets;
  }
  // The stamps of the packets of `type` sent to `destination`, in order.
  std::vector<std::uint64_t> stamps_to(comm::node_id destination, packet_type type) {
    std::vector<std::uint64_t> stamps;
    for (const wire_packet& p : sent_to(destination)) {
      if (p.header.type == type) stamps.push_back(p.header.stamp);
    }
    return stamps;
  }
  // The last packet sent to `destination`; fails the test when there is none.
  wire_packet last_to(comm::node_id destination) {
    std::vector<wire_packet> all = sent_to(destination);
    if (all.empty()) {
      ADD_FAILURE() << "nothing was sent to node " << destination;
      return {};
    }
    return all.back();
  }
  std::size_t total_sent() {
    collect_loopback();
    std::size_t n = 0;
    for (const auto& per_node : transport.sent) n += per_node.size();
    return n;
  }
  void forget() {
    collect_loopback();
    for (auto& per_node : transport.sent) per_node.clear();
  }

  scripted_transport transport;
  outbound out;

 private:
  void collect_loopback() {
    while (out.has_loopback()) {
      std::vector<std::byte> bytes;
      out.take_loopback(bytes);
      transport.sent[transport.self()].push_back(std::move(bytes));
    }
  }
};

}  // namespace iso::nicfw::scripted
