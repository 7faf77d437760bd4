// A wake-up word a node sleeps on when it has no traffic, so that idle nodes do not burn a
// core. It lives in memory every sender can reach (a shared segment for `shm`), and uses a
// process-shared futex, so the same code serves threads and processes.
//
// Protocol (Dekker-style, no lost wake-ups):
//   receiver: ticket = prepare_sleep(); if (nothing pending) sleep(ticket, timeout);
//   finish_sleep(); sender:   publish the packet; ring(): a full fence, then a futex wake only if
//   someone sleeps.
// The fast path of a sender is one fence and one load of a line that rarely changes (see
// `idle` for jobs with more nodes than cores).
#pragma once

#include <atomic>
#include <cstdint>

#include "absl/time/time.h"

namespace iso::comm {

struct alignas(64) doorbell {
  std::atomic<std::uint32_t> sequence{0};
  std::atomic<std::uint32_t> sleepers{0};
  // Nonzero while the node this bell belongs to waits (in its runtime's wait loop, where it
  // sleeps, or polls for what others send it); its host's other nodes read it to tell
  // whether a core would go unused if they polled instead of sleeping
  // (transport::busy_neighbours). Only nodes with more nodes than cores on their host write
  // it, at each wait; they write `sleepers` at each sleep anyway, so the senders' line
  // changes about as often as before there.
  std::atomic<std::uint32_t> idle{0};

  // Announces the intent to sleep; returns the ticket to pass to sleep().
  std::uint32_t prepare_sleep();
  // Blocks until ring() is called after prepare_sleep(), or `timeout` passes, or a spurious
  // wake-up; callers re-check their condition either way.
  void sleep(std::uint32_t ticket, absl::Duration timeout);
  void finish_sleep();

  // Wakes sleepers, if any. Call after publishing whatever they wait for.
  void ring();
};

static_assert(sizeof(doorbell) == 64);

}  // namespace iso::comm
