// The SMM's reads that complete inside end(), without a pulse: a lone read of this node's
// own copy, and same-host reads from another node's window (same_host_reads.hpp). Both
// must still sit at one place in the global order (order_point) against this node's own
// isochrons and copies; that placing is the SMM's, the window protocol is the unit's.
#include <algorithm>
#include <thread>

#include "absl/time/clock.h"
#include "runtime/smm/shared_memory_manager.hpp"

namespace iso::runtime {

namespace {

// The longest a same-host read sleeps on its owner's window before it looks again. Short:
// something of this node's that its NIC thread does not ring for could be what the owner
// waits for.
constexpr absl::Duration kDirectReadSleep = absl::Microseconds(100);
// How many tries a same-host read makes with an inline NIC before the NIC path, and for how
// long at most (about what the tries take on an idle machine).
constexpr int kInlineAttempts = 1024;
constexpr absl::Duration kLongestInlineWait = absl::Microseconds(50);
// The longest a same-host read waits for its owner in all, before the NIC path.
constexpr absl::Duration kLongestDirectReadWait = absl::Milliseconds(20);

}  // namespace

absl::StatusOr<bool> shared_memory_manager::serve_lone_read() {
  const page_info& page = *lone_read_.page;
  if (!hit_.empty()) return false;
  if (!page.local()) {
    // Relaxed mode: a read of another node's copy takes the NIC path (options::relaxed).
    if (!options_.direct_reads || options_.relaxed) return false;
    window_reads_.clear();
    if (!window_reads_.note(page.read_target, page, lone_read_.address, lone_read_.count, 0,
                            lone_read_.slot, 0)) {
      return false;
    }
    return serve_direct_reads(page.read_target);
  }
  // A purely local isochron that only reads: it changes nothing, so it needs no change
  // section and no notice batch. Tracing, a variable that waits for its assign, or a
  // same-host read of this node's that sat at a later pulse: the general path.
  if (options_.trace || last_.pulse > through_) return false;
  const order_point at = local_point(local_step());
  const shared_variable* vars = memory_.copy_of(page, lone_read_.address);
  direct_values_.resize(lone_read_.count);
  for (std::uint32_t i = 0; i < lone_read_.count; ++i) {
    if (vars[i].sched_by != 0) return false;
    direct_values_[i] = vars[i].value;
  }
  slots_.fill_all(lone_read_.slot, direct_values_);
  last_ = at;
  if (absl::Status s = progress_after_call(); !s.ok()) return s;
  return true;
}

absl::StatusOr<bool> shared_memory_manager::serve_direct_reads(node_id owner) {
  const std::uint32_t nodes = nic_.topo().nodes();
  // The owner's copies may stand behind what this node has seen, until it runs its next
  // round; waiting for that is cheaper than the NIC path, which needs a later round of the
  // owner's and then moves this node further on in logical time (so the next read would
  // wait again). The wait follows the node's waiter policy (poll, yield), then, with a NIC
  // thread, sleeps on the owner's window, which leaves the core to an owner that shares
  // it. Bounded: an owner that stays behind (busy elsewhere, or gone) gets the NIC path's
  // request instead, whose wait sleeps on this node's own doorbell and names a node that
  // failed.
  //
  // Inline NICs wait as before: up to kInlineAttempts tries, making progress and yielding,
  // then the NIC path. Demanding the owner's next pulse there made the two nodes of the
  // symmetric pattern drift apart (one ran ahead and slept, and every read of the other
  // then had to wake it): iso-cross-reads took 30 to 170 us per iteration in many runs
  // instead of 1.1 to 1.4.
  const bool inline_nic = nic_.runs_inline();
  const waiter_policy& policy = loop_.policy();
  const int polls_before_sleeping = policy.spin_polls + policy.yield_polls;
  // Whether `longest` has passed since the first time it was asked.
  absl::Time started = absl::InfiniteFuture();
  auto waited = [&started](absl::Duration longest) {
    const absl::Time now = absl::Now();
    if (started == absl::InfiniteFuture()) started = now;
    return now - started >= longest;
  };
  std::uint64_t demanded = 0;
  order_point at;
  // `idle`: attempts in a row whose round had no work, as wait_rounds counts them: a round
  // with work (tokens, this node's own pulses) means time is moving, and sleeping then
  // would only slow it.
  for (int attempt = 0, idle = 0;; ++attempt, ++idle) {
    // Every isochron this node stamps from now on executes at this pulse or later (its NIC
    // stamps at least its stamp base plus the distance to the nearest node). The read must
    // sit before them all; with several switches, another node's copies may already stand
    // further on in logical time (its pulses close sooner).
    const std::uint64_t next_stamp_floor = nic_.time().stamp_base + nearest_distance_;
    // The read must not sit before anything this node has seen: its own isochrons, and
    // its own copies as they stand (what they hold, notices of what ran in those pulses,
    // and everything a barrier waited for).
    const order_point earliest = std::max(last_, order_point{through_, 0, nodes, 0, 0});
    const same_host_reads::outcome got =
        window_reads_.try_serve(owner, earliest, next_stamp_floor, at);
    if (got == same_host_reads::outcome::served) break;
    if (got == same_host_reads::outcome::declined) return false;
    const bool behind = got == same_host_reads::outcome::owner_behind;
    if (behind) {
      // Inside a message handler this node may not make progress, so it cannot wait here;
      // sending the NIC path's request needs no wait.
      if (loop_.progress_forbidden()) return false;
      // Time is lazy: the owner catches up only with pulses someone needs. Its copies will
      // do once they stand at earliest.pulse (a step puts the read after what this node
      // has seen there), which needs logical time one pulse further.
      if (!inline_nic && demanded < earliest.pulse + 1) {
        demanded = earliest.pulse + 1;
        nic_.demand(demanded);
        window_reads_.want_owner_at(owner, earliest.pulse);
      }
      bool did = false;
      if (absl::Status s = loop_.progress(did); !s.ok()) return s;
      if (did) idle = 0;
    }
    if (inline_nic) {
      if (attempt + 1 == kInlineAttempts) return false;
      if (attempt % 8 == 7) {
        // On a loaded machine each yield may cost a time slice: bounded in time too.
        if (waited(kLongestInlineWait)) return false;
        std::this_thread::yield();
      }
      continue;
    }
    // The bound, and the job's health, whatever the rounds find to do.
    if (attempt % 64 == 63) {
      if (waited(kLongestDirectReadWait)) return false;
      if (absl::Status s = loop_.job_status(); !s.ok()) return s;
    }
    if (idle < policy.spin_polls) continue;
    if (idle >= polls_before_sleeping && behind) {
      // With fibers, the sleep would hold them all: the NIC path's wait lets them run.
      if (loop_.runs_fibers()) return false;
      // The owner may wait for this node in turn (reading its copies): this node's pulses
      // closing must wake it as well, so its NIC thread rings the owner's bell too while
      // it sleeps there.
      nicfw::host_channel& channel = nic_.channel();
      channel.host_also_ring(&window_reads_.owner_bell(owner));
      // A delivery that came since the last round rang before this sleep was announced.
      window_reads_.wait_for_owner(owner, kDirectReadSleep, [&] {
        return nic_.time().closed <= through_ && !channel.host_has_deliveries();
      });
      channel.host_also_ring(nullptr);
      continue;
    }
    std::this_thread::yield();  // or `changing`: the owner is amid a change, soon done
  }
  last_ = at;
  ++direct_reads_;
  std::size_t k = 0;
  const std::span<const std::uint64_t> all = window_reads_.values();
  for (const same_host_reads::noted_read& read : window_reads_.reads()) {
    const auto values = all.subspan(k, read.count);
    if (read.first == 0 && read.count == slots_.size(read.slot)) {
      slots_.fill_all(read.slot, values);
    } else if (absl::Status s = slots_.fill(read.slot, read.first, values); !s.ok()) {
      return s;
    }
    if (options_.trace) {
      for (std::uint32_t i = 0; i < read.count; ++i) {
        trace_.push_back({.pulse = at.pulse,
                          .after_pulse = true,
                          .step = at.step,
                          .pid = owner,
                          .rank = at.rank,
                          .op_index = read.index,
                          .op = trace_op::read,
                          .address = read.address + i,
                          .value = values[i],
                          .node = owner,
                          .direct = true,
                          .issuer = self_,
                          .issue_rank = builder_.rank()});
      }
    }
    k += read.count;
  }
  if (absl::Status s = progress_after_call(); !s.ok()) return s;
  return true;
}

}  // namespace iso::runtime
