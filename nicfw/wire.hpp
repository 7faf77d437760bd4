// The packets NICs exchange over comm/. Every packet starts with a 24-byte header; what
// follows depends on the type. Receivers validate length, type and sender before acting
// (a packet from a stranger is reported, never trusted).
//
//   iso_data   stamp = the isochron's logical receive time R, a = isochron sequence number,
//              payload = the host's operations for this destination (opaque to the NIC)
//   direct     payload = a non-isotach host packet (read responses, plain messages)
//   siu_token  SIU -> its TM: stamp = token number, body = token_body + count entries
//   tm_token   TM -> SIU: stamp = token number, body = token_body + count entries for
//              packets destined to that SIU's node
//   link_token TM -> adjacent TM: stamp = token number, a = sending switch, body as siu_token
//   demand     stamp = the token number someone needs (lazy time); a = sending switch (from
//              a TM) or kNoSwitch (from an SIU); to_switch = the TM addressed, or kToSiu
//   park       SIU -> its TM: stamp = the SIU's last token, body as siu_token (its final
//              counts). The SIU stamps nothing until unparked, so the TM stops waiting for
//              its tokens: an idle node is off every pulse's critical path.
//   unpark     SIU -> its TM: the SIU wants to stamp again.
//   unparked   TM -> SIU: stamp = the token number the SIU resumes from.
//   credit     body = credit_info: the sender's freed counts for the receiver (flow control)
//   credit_request  the sender waits for credits from the receiver
// iso_data and direct packets carry a credit_info right after the header (piggy-backed
// credits), then their payload.
//
// Every packet has a sequence number per (sender, receiver), set as it leaves, and in
// paranoid mode a CRC-32 of everything after the header; receivers in paranoid mode check
// both.
// Tokens and demands for a TM name it in to_switch (a node may host several TMs).
#pragma once

#include <cstdint>
#include <cstring>
#include <span>

namespace iso::nicfw {

enum class packet_type : std::uint8_t {
  iso_data = 1,
  direct = 2,
  siu_token = 3,
  tm_token = 4,
  link_token = 5,
  demand = 6,
  park = 7,
  unpark = 8,
  unparked = 9,
  credit = 10,
  credit_request = 11,
};

// A readable name for error messages (the built-in types; a service names its own).
constexpr const char* packet_type_name(packet_type t) {
  switch (t) {
    case packet_type::iso_data:
      return "iso_data";
    case packet_type::direct:
      return "direct";
    case packet_type::siu_token:
      return "siu_token";
    case packet_type::tm_token:
      return "tm_token";
    case packet_type::link_token:
      return "link_token";
    case packet_type::demand:
      return "demand";
    case packet_type::park:
      return "park";
    case packet_type::unpark:
      return "unpark";
    case packet_type::unparked:
      return "unparked";
    case packet_type::credit:
      return "credit";
    case packet_type::credit_request:
      return "credit_request";
  }
  return "unknown";
}
// NIC services (service.hpp) number their own packet types from here up.
inline constexpr std::uint8_t kFirstServicePacketType = 16;
inline constexpr int kPacketTypes = 32;  // for per-type tables, indexed by the type's value

inline constexpr std::uint32_t kNoSwitch = 0xffffffff;

inline constexpr std::uint16_t kToSiu = 0xffff;

// iso_data and direct packets larger than the transport carries travel as fragments, in
// order (a NIC sends one submission at a time, and each pair is FIFO); every fragment but
// the last has this flag, and the receiver hands the reassembled whole to its host.
inline constexpr std::uint8_t kMoreFragments = 1;

struct packet_header {
  packet_type type;
  std::uint8_t flags = 0;
  std::uint16_t to_switch = kToSiu;  // tokens and demands: the TM addressed, or the SIU
  std::uint32_t a = 0;
  std::uint64_t stamp = 0;
  std::uint32_t sequence = 0;  // per (sender, receiver), from 0; set by outbound
  std::uint32_t checksum = 0;  // paranoid mode: CRC-32 of the rest of the packet
};
static_assert(sizeof(packet_header) == 24);

// The fixed part of every token's body.
struct token_body {
  std::uint64_t want = 0;     // the highest token number the sender knows someone needs
  std::uint32_t entries = 0;  // count entries that follow
  std::uint32_t reserved = 0;
};
static_assert(sizeof(token_body) == 16);

// Cumulative number of isotach packets `source` has sent to `destination`. Counts are per
// pair because a receiver must know that *each* sender's packets have arrived: a total
// would let one fast sender's extra packets hide another's missing one.
struct count_entry {
  std::uint32_t source;
  std::uint32_t destination;
  std::uint64_t count;
};
static_assert(sizeof(count_entry) == 16);

// Reads a trivially copyable T at `offset`; false when the bytes are too short.
template <typename T>
bool read_at(std::span<const std::byte> bytes, std::size_t offset, T& out) {
  if (bytes.size() < offset + sizeof(T)) return false;
  std::memcpy(&out, bytes.data() + offset, sizeof(T));
  return true;
}

}  // namespace iso::nicfw
