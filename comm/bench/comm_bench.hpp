#pragma once

namespace iso::bench {

// Runs one node of the measurement; the driver starts two of them with isorun.
int run_worker();

}  // namespace iso::bench
