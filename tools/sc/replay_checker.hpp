// Checks a recorded history (the trace events of every node) against sequential
// consistency as isotach defines it: order every event by (pulse, after_pulse, step, pid,
// rank, op_index); replaying that order on one memory, every read must return the value of the
// latest write before it, or, when the latest post is a sched, the value that sched's
// assign later supplies. Copies of a variable on several nodes execute the same changes,
// so changes are replayed once per (position, address).
#pragma once

#include <string>
#include <vector>

#include "iso/trace.hpp"

namespace iso::sc {

struct sc_report {
  bool consistent = true;
  std::size_t reads_checked = 0;
  std::size_t changes = 0;
  std::string first_violation;
};

sc_report check_sequential_consistency(std::vector<iso::trace_event> events);

}  // namespace iso::sc
