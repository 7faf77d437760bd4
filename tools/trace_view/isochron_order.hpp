// The isochrons of a history in the global order the runtime recorded, for drawing: each
// isochron (issuer, issue_rank) at its earliest place (pulse, after_pulse, step, pid,
// rank, !direct), with the events each node executed of it.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "tools/trace_view/history_view.hpp"

namespace iso::trace_view {

struct drawn_isochron {
  std::uint32_t issuer = 0;
  std::uint64_t issue_rank = 0;
  std::uint64_t pulse = 0;
  bool after_pulse = false;
  std::map<std::uint32_t, std::vector<const iso::trace_event*>> at_node;  // node -> events
};

std::vector<drawn_isochron> isochrons_in_order(const history_view& h);

}  // namespace iso::trace_view
