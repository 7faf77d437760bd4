// What a ucx transport puts on the wire: two kinds of active message and their headers.
// Shared with the tests, which play a misbehaving peer.
#pragma once

#include <cstdint>

namespace iso::comm::ucx_detail {

// Active message ids: packets, and the credits a receiver returns to their sender.
inline constexpr unsigned kPacketAm = 0x1500;
inline constexpr unsigned kCreditAm = 0x1501;

// The header of every packet (the payload is the active message's data).
struct packet_header {
  std::uint32_t source;
  std::uint32_t reserved;
  std::uint64_t sequence;  // per ordered pair, from 0
};
// The header of a credit message (no data).
struct credit_header {
  std::uint32_t source;  // the receiver that returns the credit
  std::uint32_t reserved;
  std::uint64_t released;  // bytes of the sender's packets it has released so far, in all
};

}  // namespace iso::comm::ucx_detail
