#include "runtime/progress/event_loop.hpp"

#include <algorithm>
#include <optional>
#include <thread>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_format.h"
#include "base/check.hpp"
#include "runtime/progress/direct_tags.hpp"

namespace iso::runtime {

event_loop::event_loop(nicfw::engine& nic, waiter_policy policy,
                       std::function<absl::Status()> job_status)
    : nic_(nic), policy_(policy), job_status_(std::move(job_status)) {}

void event_loop::add_unit(delivery_unit& unit, std::span<const nicfw::delivery_kind> kinds,
                          bool ends_rounds) {
  for (nicfw::delivery_kind kind : kinds) {
    const auto k = static_cast<std::size_t>(kind);
    ISO_CHECK(kind != nicfw::delivery_kind::direct && by_kind_[k] == nullptr)
        << "delivery kind " << k << " is already taken";
    by_kind_[k] = &unit;
  }
  if (ends_rounds) units_.push_back(&unit);
}

void event_loop::add_direct_unit(delivery_unit& unit, std::uint8_t tag, bool ends_rounds) {
  ISO_CHECK(by_direct_tag_[tag] == nullptr) << "direct tag " << int{tag} << " is already taken";
  by_direct_tag_[tag] = &unit;
  if (ends_rounds && std::find(units_.begin(), units_.end(), &unit) == units_.end()) {
    units_.push_back(&unit);
  }
}

void event_loop::on_delivery(const nicfw::delivery& d) {
  delivery_unit* unit = nullptr;
  if (d.kind == nicfw::delivery_kind::direct) {
    if (!d.payload.empty()) unit = by_direct_tag_[static_cast<std::uint8_t>(d.payload[0])];
  } else {
    unit = by_kind_[static_cast<std::size_t>(d.kind)];
  }
  if (unit != nullptr) {
    unit->on_delivery(d);
    return;
  }
  if (d.kind == nicfw::delivery_kind::direct) {
    fail(malformed_direct_packet(d));
    return;
  }
  fail(absl::InvalidArgumentError(
      absl::StrFormat("delivery of kind %u from node %u, which nothing here takes",
                      static_cast<unsigned>(d.kind), d.source)));
}

absl::Status event_loop::progress(bool& did_work) {
  if (forbidden_inside_ != nullptr) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "waiting or polling inside %s, where this node may not make progress", forbidden_inside_));
  }
  // After a failure nothing more executes here: a pulse that failed part-way is never run
  // again, and no later pulse runs after it.
  if (!failure_.ok()) return failure_;
  unpolled_work_ = 0;
  if (nic_.runs_inline()) {
    if (absl::Status s = nic_.poll(did_work); !s.ok()) return s;
  } else if (absl::Status s = nic_.failure(); !s.ok()) {
    return s;
  }
  // Every EOP up to `closed` is in the queue by now (the NIC queues them first), so once
  // the queue is drained and the units have ended the round, every pulse up to it has run.
  const std::uint64_t closed = nic_.time().closed;
  closed_ran_ = closed;
  const std::size_t handled =
      nic_.channel().host_poll([this](const nicfw::delivery& d) { on_delivery(d); });
  did_work |= handled != 0;
  if (nic_.overflow() != 0) {
    for (delivery_unit* unit : relievers_) unit->relieve_pressure(did_work);
  }
  for (delivery_unit* unit : units_) {
    if (absl::Status s = unit->end_round(closed, did_work); !s.ok()) {
      fail(s);
      return s;
    }
  }
  return failure_;
}

absl::Status event_loop::wait_for(absl::FunctionRef<bool()> done) {
  if (fibers_ == nullptr || forbidden_inside_ != nullptr) return wait_rounds(done);
  return fibers_->wait(done);
}

absl::StatusOr<bool> event_loop::wait_until(absl::Time deadline, absl::FunctionRef<bool()> done) {
  bool held = false;
  if (absl::Status s = wait_for([&] {
        held = done();
        return held || absl::Now() >= deadline;
      });
      !s.ok()) {
    return s;
  }
  return held;
}

absl::Status event_loop::wait_rounds(absl::FunctionRef<bool()> done) {
  int idle = 0;
  // Since when no round had work, once the node dozes. A doze's end is no sign of that: a
  // wake-up may come for a packet an earlier round already took.
  absl::Time quiet_since = absl::InfiniteFuture();
  // How long that has been, counted from the first time it is asked since a round had work.
  const auto quiet_for = [&quiet_since](absl::Time now) {
    if (quiet_since == absl::InfiniteFuture()) quiet_since = now;
    return now - quiet_since;
  };
  // Whether this node has told its host that it waits (waiter_policy::spare_cores): from
  // the start, as a node that computes between short waits counts as busy only while it
  // computes.
  const bool announced = policy_.spare_cores > 0 && nic_.runs_inline();
  if (announced) nic_.announce_idle(true);
  absl::Cleanup busy_again = [&] {
    if (announced) nic_.announce_idle(false);
  };
  while (!done()) {
    bool did = false;
    if (absl::Status s = progress(did); !s.ok()) return s;
    if (did) {
      idle = 0;
      quiet_since = absl::InfiniteFuture();
      continue;
    }
    if (done()) break;
    ++idle;
    if (idle < policy_.spin_polls) continue;
    if (absl::Status s = job_status(); !s.ok()) return s;
    if (idle < policy_.spin_polls + policy_.yield_polls) {
      std::this_thread::yield();
      continue;
    }
    if (announced) {
      if (quiet_for(absl::Now()) < policy_.spare_core_polling && core_to_spare()) {
        std::this_thread::yield();
        continue;
      }
    }
    sleeps_.fetch_add(1, std::memory_order_relaxed);
    const absl::Duration longest =
        unannounced_waits_ > 0
            ? std::min(policy_.sleep,
                       std::max(kUnannouncedSleep, (absl::Now() - unannounced_since_) / 8))
            : policy_.sleep;
    if (!nic_.runs_inline()) {
      // A ring for a pulse that closed after this round looked is heard: the NIC rings
      // for closes too (engine::ring_host_on_close_for), not only for deliveries.
      nic_.channel().host_wait(longest, [this] { return nic_.time().closed <= closed_ran_; });
    } else if (policy_.doze > absl::ZeroDuration()) {
      const absl::Duration quiet = quiet_for(absl::Now());
      if (quiet < policy_.doze) {
        nic_.doze(std::min(longest, policy_.doze - quiet));
      } else {
        nic_.wait(longest);  // parks first: nobody needed this node for a while
      }
    } else {
      nic_.wait(longest);
    }
    // Polls again from the start; but an unannounced wait, which wakes often, must not poll
    // and yield each time: there a round that finds nothing sleeps again at once (one that
    // finds work starts the polling over).
    idle = unannounced_waits_ > 0 ? policy_.spin_polls + policy_.yield_polls - 1 : 0;
  }
  return absl::OkStatus();
}

bool event_loop::core_to_spare() const {
  const std::optional<std::uint32_t> busy = nic_.busy_neighbours(policy_.spare_cores);
  return busy.has_value() && *busy < policy_.spare_cores;
}

absl::Status event_loop::submit(nicfw::submission_kind kind, comm::node_id to,
                                std::span<const comm::byte_span> pieces) {
  if (nic_.runs_inline()) {
    absl::StatusOr<bool> sent = nic_.send_at_once(kind, to, pieces);
    if (!sent.ok()) return sent.status();
    if (*sent) return absl::OkStatus();
  }
  while (!nic_.channel().host_submit(kind, to, pieces)) {
    // Inline mode: the NIC runs only when we run it.
    if (nic_.runs_inline()) {
      bool did = false;
      if (absl::Status s = nic_.poll(did); !s.ok()) return s;
    } else {
      if (absl::Status s = nic_.failure(); !s.ok()) return s;
      std::this_thread::yield();
    }
  }
  return send_now();
}

absl::Status event_loop::send_now() {
  if (!nic_.runs_inline()) {
    nic_.wake();
    return absl::OkStatus();
  }
  // Inline, the NIC runs only when the host calls into the runtime: without this what was
  // submitted would wait for the sender's next call, which may come after a long
  // computation (a reply to a call just served, for one, submitted in the round that ends
  // the wait, or the row a node puts before it computes the next half-sweep). Only the
  // sending part of a round: a full one per submission would slow a stream of them.
  const bool parked = nic_.parked();
  if (absl::Status s = nic_.send_submitted(); !s.ok()) return s;
  if (!parked) return absl::OkStatus();
  // Once per unpark, by the call whose round asked for it: after a wait that ran out, the
  // calls that follow while the SIU is still unparking do not wait again.
  if (nic_.unparking()) return await_unpark();
  // Its TMs are all on this node and answered at once (or nothing needed a stamp): what
  // the round could not take then goes now.
  return nic_.send_submitted();
}

absl::Status event_loop::await_unpark() {
  const absl::Time deadline = absl::Now() + policy_.unpark_wait;
  int idle = 0;
  // Once the last answer is in, the next round stamps what waits.
  while (nic_.channel().nic_has_submissions()) {
    bool did = false;
    if (absl::Status s = nic_.poll(did); !s.ok()) return s;
    const absl::Time now = absl::Now();
    if (now >= deadline) break;
    if (did) {
      idle = 0;
      continue;
    }
    if (++idle < policy_.spin_polls) continue;
    if (absl::Status s = job_status(); !s.ok()) return s;
    // A sleep would hold every fiber of the node, which may have work of its own.
    if (runs_fibers() || idle < policy_.spin_polls + policy_.yield_polls) {
      std::this_thread::yield();
    } else {
      nic_.await_packet(deadline - now);
    }
  }
  return absl::OkStatus();
}

}  // namespace iso::runtime
