// A history as a self-contained HTML page (no scripts, no external resources): an SVG
// logical-time diagram with one lifeline per node and pulses downwards; each isochron is a
// box spanning the lifelines where it executed, each execution labelled with its operation
// ("R y=0" shows the value a read returned); the checker's cycle, if any, is drawn in red
// and spelled out under the diagram, as is the verdict.
//
// For tests and scripts the page's DOM carries: one <line class="lifeline" data-node="N">
// per node, one <g class="isochron" data-issuer data-rank> per isochron, and
// <p id="verdict"> with the verdict text.
#pragma once

#include <string>

#include "tools/trace_view/history_view.hpp"

namespace iso::trace_view {

std::string logical_time_page(const history_view& h);

}  // namespace iso::trace_view
