// A recorded history prepared for people to look at: the events of a run, names for its
// addresses, and the checker's judgement. Written out as Chrome trace JSON (chrome_trace.hpp)
// or as a self-contained HTML page with an SVG logical-time diagram (logical_time_page.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "iso/trace.hpp"
#include "tools/sc/sc_graph.hpp"

namespace iso::trace_view {

struct history_view {
  std::string title;    // e.g. "SB, run 17"
  std::string outcome;  // e.g. "0:r0=0 1:r0=1"; may be empty
  std::string verdict;  // one line, e.g. "outcome 0:r0=0 1:r0=1: allowed under SC"
  std::uint32_t nodes = 0;
  std::vector<iso::trace_event> events;             // node by node, in execution order per node
  std::map<std::uint64_t, std::string> names;       // address -> name; unnamed: "@address"
  iso::sc::graph_report judgement;                  // its cycle, if any, is marked
  std::map<std::uint32_t, std::string> node_notes;  // e.g. 2 -> "P1": shown with the node
  // How to read this picture when it is not one of logical time alone (e.g. relaxed mode);
  // shown under the verdict. Empty: none.
  std::string note;
};

// "x" or "@<address>".
std::string address_name(const history_view& h, std::uint64_t address);
// "W x=1", "R y=0", "sched x", ...
std::string operation_text(const history_view& h, const iso::trace_event& e);

}  // namespace iso::trace_view
