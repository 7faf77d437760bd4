// Runs a body as an inproc job of `nodes` threads (what `isorun --transport inproc` does),
// for tests that want several nodes in one process.
#pragma once

#include <functional>

#include "iso/iso.hpp"

namespace iso::test {

// Returns iso::run's exit status (0 when every node's body returned).
int run_inproc(int nodes, const iso::options& opts, const std::function<void(iso::node&)>& body);

}  // namespace iso::test
