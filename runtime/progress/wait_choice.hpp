// Which waiter policy a node uses (iso::wait_mode): whether a waiting node polls for its
// answer or sleeps in the kernel until a packet comes. With more nodes than cores a node
// that polls holds the core the node it waits for needs, so `automatic` sleeps then.
//
//   const bool over = job_oversubscribed(plan.env.oversubscribed, plan.env.size);
//   event_loop loop(nic, choose_waiter_policy(opts.wait, over), job_status);
#pragma once

#include <cstdint>
#include <optional>

#include "iso/options.hpp"
#include "runtime/progress/event_loop.hpp"

namespace iso::runtime {

// Whether a job of `nodes` nodes on this machine has more nodes than cores: what the
// launcher found (`launcher_says`, from ISO_OVERSUBSCRIBED) or, without one, this
// process's own count (iso::usable_cores()).
bool job_oversubscribed(std::optional<bool> launcher_says, std::uint32_t nodes);

// The policy for `mode`; `automatic` blocks exactly when `oversubscribed`.
waiter_policy choose_waiter_policy(iso::wait_mode mode, bool oversubscribed);

}  // namespace iso::runtime
