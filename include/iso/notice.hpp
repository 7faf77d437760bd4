// What the isotach receive queue hands out (node::iso_receive): isotach messages, signal
// notices and barrier notices, in logical-time order. Every node that receives the same
// notices receives them in the same order and at the same logical time, interleaved
// consistently with shared-variable operations and handler-style messages.
//
//   { iso::isochron iso(node); iso.send(2, bytes); }     // a message into 2's queue
//   node.signal(1);                                       // everybody sees channel 1 fire
//   node.start_barrier(0, iso::barrier_mode::strong);     // completion arrives as a notice
//   for (;;) {
//     iso::notice n = node.iso_receive();
//     if (n.what == iso::notice::kind::barrier) break;
//   }
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace iso {

// Channels for signals and barriers: 0..kChannels-1, independent of each other.
using channel_id = std::uint32_t;
inline constexpr channel_id kChannels = 8;

// How much an isotach barrier guarantees when it completes at a node (the Ironman
// messaging layer's two modes):
//   weak    every node has started the barrier on the channel;
//   strong  also, every isotach message a participant issued before starting it has been
//           received at this node (its notice precedes the barrier notice in the queue).
// Both complete at one logical time on every node. A weak barrier's notice comes before the
// messages of its completion pulse; a strong one's after them.
enum class barrier_mode : std::uint8_t { weak = 0, strong = 1 };

struct notice {
  enum class kind : std::uint8_t {
    message = 1,  // an isotach message: source, bytes
    signal = 2,   // channel fired: count signals (from any nodes) coalesced into this one
    barrier = 3,  // barrier instance `instance` on `channel` completed, in mode `mode`
  };
  kind what = kind::message;
  std::uint64_t pulse = 0;     // the logical time it was received at, the same everywhere
  std::uint32_t source = 0;    // message: the sender
  channel_id channel = 0;      // signal, barrier
  std::uint32_t count = 0;     // signal: how many signals coalesced
  std::uint64_t instance = 0;  // barrier: 0 for the channel's first barrier, then 1, 2...
  barrier_mode mode = barrier_mode::strong;  // barrier
  std::vector<std::byte> bytes;              // message payload
};

}  // namespace iso
