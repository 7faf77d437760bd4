// The executed history of a node, for checkers, visualisations and teaching. Recording is
// off unless iso::options::trace is set. Each event is one operation on one variable (or
// one isochronous message) executed at this node, with its place in the global order.
#pragma once

#include <cstdint>

namespace iso {

enum class trace_op : std::uint8_t {
  read = 1,
  write = 2,
  sched = 3,
  assign = 4,
  message = 5,
  fetch_add = 9,  // the atomic read-modify-writes: `value` read, `stored` stored
  exchange = 10,
  compare_exchange = 11,
};

struct trace_event {
  // Place in the global order: (pulse, after_pulse, step, pid, rank, !direct, op_index).
  // `after_pulse` marks a purely local isochron that ran once every operation of `pulse`
  // had (and nothing of a later pulse had). Between two pulses, `step` orders such
  // isochrons and same-host reads before their node does: a Lamport clock that puts each
  // after everything its node had seen (0 for every operation of a pulse).
  std::uint64_t pulse = 0;
  bool after_pulse = false;
  std::uint64_t step = 0;
  std::uint32_t pid = 0;       // the node that issued the isochron
  std::uint64_t rank = 0;      // its issue number at that node
  std::uint32_t op_index = 0;  // position of the operation in the isochron's stream here
  trace_op op = trace_op::read;
  std::uint64_t address = 0;  // for message: the handler id
  std::uint64_t value = 0;    // read: the value returned; write/assign: the value stored;
                              // read-modify-write: the value it read
  std::uint32_t node = 0;     // where it executed
  // A same-host read (options::direct_reads) is served from another node's copy without
  // the NIC, and sits where that copy stood: after every operation of `pulse`, right
  // before purely local isochron `rank` of `pid`, the copy's owner (`node`). Such an event
  // has `direct` set and names its own isochron in `issuer` and `issue_rank`; for every
  // other event those equal `pid` and `rank`.
  bool direct = false;
  std::uint32_t issuer = 0;
  std::uint64_t issue_rank = 0;
  std::uint64_t stored = 0;  // read-modify-write: the value it stored
};

}  // namespace iso
