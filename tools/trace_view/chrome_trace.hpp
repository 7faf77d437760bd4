// A history as Chrome trace JSON (the Trace Event Format read by chrome://tracing and,
// best effort, Perfetto): one process per node with two tracks, "issued" (one slice per
// isochron the node issued) and "executed" (one slice per operation executed there), and a
// flow arrow from each isochron to every execution of it on another node. Time is logical:
// a slice starts at pulse x 1000 us plus its rank inside the pulse, so slices never overlap
// on a track (Perfetto requires that).
#pragma once

#include <string>

#include "tools/trace_view/history_view.hpp"

namespace iso::trace_view {

std::string chrome_trace_json(const history_view& h);

}  // namespace iso::trace_view
