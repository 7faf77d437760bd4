// Runs one job: starts its nodes, forwards (or tags) their output, and supervises them
// until all have exited, stopping the whole job when one fails, when it runs past its
// timeout, or when isorun is interrupted.
#pragma once

#include "tools/isorun/options.hpp"

namespace iso::isorun {

// Returns isorun's exit status: 0 when every node exited 0; a failing node's status, or
// 128 + its signal; 124 after --timeout; 128 + the signal when interrupted (130 for SIGINT);
// 1 when the job could not be started; 126/127 (from the nodes) when the program cannot be
// executed or was not found. See usage_text().
int run_job(const options& opts);

}  // namespace iso::isorun
