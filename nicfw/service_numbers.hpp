// Where each NIC service's numbers lie: its packet types (wire.hpp) and its submission and
// delivery kinds (host_channel.hpp; a service's submission kinds and delivery kinds share
// their offsets). Services are written side by side, each in its own files; this one table
// keeps their ranges apart at compile time (the engine also refuses a number bound twice,
// at start-up). A new service takes the next free range here.
#pragma once

#include <array>
#include <cstdint>

#include "nicfw/host_channel.hpp"
#include "nicfw/wire.hpp"

namespace iso::nicfw {

struct service_numbers {
  std::uint8_t first_packet;  // packet types first_packet .. first_packet + packets - 1
  std::uint8_t packets;
  std::uint8_t first_kind;  // submission and delivery kinds first_kind .. + kinds - 1
  std::uint8_t kinds;
};

static_assert(kFirstServiceSubmission == kFirstServiceDelivery);

inline constexpr service_numbers kFetchAddNumbers{kFirstServicePacketType, 2,
                                                  kFirstServiceSubmission, 1};
inline constexpr service_numbers kMulticastNumbers{kFirstServicePacketType + 2, 5,
                                                   kFirstServiceSubmission + 1, 1};
inline constexpr service_numbers kRemoteStoreNumbers{kFirstServicePacketType + 8, 5,
                                                     kFirstServiceSubmission + 8, 4};

namespace detail {

inline constexpr std::array kAllServiceNumbers = {kFetchAddNumbers, kMulticastNumbers,
                                                  kRemoteStoreNumbers};

constexpr bool ranges_apart(int a_first, int a_count, int b_first, int b_count) {
  return a_first + a_count <= b_first || b_first + b_count <= a_first;
}

constexpr bool service_numbers_apart() {
  for (std::size_t i = 0; i < kAllServiceNumbers.size(); ++i) {
    const service_numbers& a = kAllServiceNumbers[i];
    if (a.first_packet + a.packets > kPacketTypes) return false;
    for (std::size_t j = i + 1; j < kAllServiceNumbers.size(); ++j) {
      const service_numbers& b = kAllServiceNumbers[j];
      if (!ranges_apart(a.first_packet, a.packets, b.first_packet, b.packets)) return false;
      if (!ranges_apart(a.first_kind, a.kinds, b.first_kind, b.kinds)) return false;
    }
  }
  return true;
}

}  // namespace detail

static_assert(detail::service_numbers_apart(),
              "two NIC services share a number, or one lies beyond the packet-type table");

// The n-th packet type, and the n-th submission and delivery kind, of a service's range.
constexpr packet_type service_packet(const service_numbers& s, int n) {
  return static_cast<packet_type>(s.first_packet + n);
}
constexpr submission_kind service_submission(const service_numbers& s, int n) {
  return static_cast<submission_kind>(s.first_kind + n);
}
constexpr delivery_kind service_delivery(const service_numbers& s, int n) {
  return static_cast<delivery_kind>(s.first_kind + n);
}

}  // namespace iso::nicfw
