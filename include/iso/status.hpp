// A snapshot of one node's messaging layer (node::status()): where logical time stands,
// flow-control credits and buffer use per peer, queue depths and packet counts. For
// monitoring, tests and teaching; taking one costs a few microseconds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace iso {

// Flow control of one class of traffic with one peer, in bytes (each packet also costs a
// fixed 64-byte overhead, so that empty messages are bounded too).
struct credit_status {
  std::uint64_t in_flight = 0;      // sent to the peer and not yet freed there
  std::uint64_t available = 0;      // what may still be sent before waiting for credits
  std::uint64_t buffered = 0;       // received from the peer and not yet freed here
  std::uint64_t peak_buffered = 0;  // the most ever buffered from the peer
};

// Packets by class, as the NICs exchange them.
struct packet_tally {
  std::uint64_t isotach = 0;  // isotach data (isochron parts; fragments count one each)
  std::uint64_t direct = 0;   // plain messages, read replies, echoes
  std::uint64_t tokens = 0;   // logical time: tokens, demands, park and unpark
  std::uint64_t credits = 0;  // explicit credit packets and credit requests
};

struct peer_status {
  std::uint32_t peer = 0;
  credit_status isotach;         // isochron parts (isotach messages, variable operations)
  credit_status messages;        // plain messages (node::send)
  std::size_t send_backlog = 0;  // packets waiting for the path to the peer
  packet_tally sent;
  packet_tally received;
};

struct node_status {
  std::uint32_t id = 0;
  std::uint32_t nodes = 0;
  std::uint32_t diameter = 0;        // the topology's largest logical distance
  std::uint64_t pulse = 0;           // the NIC's current pulse
  std::uint64_t executed_pulse = 0;  // every pulse up to this has executed here
  std::uint64_t credit_window = 0;   // options::credit_window
  std::size_t nic_overflow = 0;      // deliveries waiting in the NIC for host queue room
  std::size_t notices_waiting = 0;   // in the isotach receive queue
  std::size_t messages_waiting = 0;  // plain messages not yet received
  std::size_t pulses_waiting = 0;    // pulses with operations that have not executed yet
  std::uint64_t direct_reads = 0;    // isochrons served as same-host reads (options)
  // Where the job runs: the fabric (shm, inproc, or ucx for a job a PMIx launcher
  // started), the transport between nodes, and the lanes it uses (ucx: the UCX transports
  // of this node's endpoints, e.g. "posix,tcp").
  std::string fabric;
  std::string transport;
  std::string lanes;
  // Where this node's thread runs (options::binding): "core 1 (cpus 5)" when bound (the
  // second core of those the process may use, and its processors), else "unbound" or,
  // where binding was tried and could not be done, "unbound: " and why.
  std::string binding;
  // How this node waits for another (options::wait): "polls, then yields, then sleeps"
  // where it has a core of its own; "sleeps at once unless a core is spare: more nodes than
  // cores" (only "sleeps at once: ..." under a PMIx launcher) where the job
  // is oversubscribed (isorun's finding; under a PMIx launcher, the nodes on this machine
  // outnumber its cores; else this process's cores) and ISO_WAIT=auto; and so on.
  std::string waiting;
  std::vector<peer_status> peers;  // one per node, this one included
};

}  // namespace iso
