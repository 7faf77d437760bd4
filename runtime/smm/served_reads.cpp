// The SMM's reads that complete inside end(), without a pulse: a lone read of this node's
// own copy, and same-host reads from another node's window (same_host_reads.hpp). Both
// must still sit at one place in the global order (order_point) against this node's own
// isochrons and copies; that placing is the SMM's, the window protocol is the unit's.
#include <algorithm>
#include <thread>

#include "runtime/smm/shared_memory_manager.hpp"

namespace iso::runtime {

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
  // same-host read of this node's that sat later: the general path.
  const order_point at = local_point();
  if (options_.trace || at <= last_) return false;
  const shared_variable* vars = memory_.copy_of(page, lone_read_.address);
  direct_values_.resize(lone_read_.count);
  for (std::uint32_t i = 0; i < lone_read_.count; ++i) {
    if (vars[i].sched_by != 0) return false;
    direct_values_[i] = vars[i].value;
  }
  slots_.fill_all(lone_read_.slot, direct_values_);
  last_ = at;
  if (absl::Status s = loop_.progress_now_and_then(); !s.ok()) return s;
  return true;
}

absl::StatusOr<bool> shared_memory_manager::serve_direct_reads(node_id owner) {
  const std::uint32_t nodes = nic_.topo().nodes();
  order_point at;
  // The owner's copies may stand behind what this node has seen, until it runs its next
  // round; waiting a little for that is cheaper than the NIC path, which needs that round
  // too and then moves this node further on in logical time (so the next read would
  // wait again). Bounded: an owner busy elsewhere gets the NIC path's request instead.
  constexpr int kAttempts = 1024;
  for (int attempt = 0;; ++attempt) {
    if (attempt == kAttempts) return false;
    // Every isochron this node stamps from now on executes at this pulse or later (its NIC
    // stamps at least its stamp base plus the distance to the nearest node). The read must
    // sit before them all; with several switches, another node's copies may already stand
    // further on in logical time (its pulses close sooner).
    const std::uint64_t next_stamp_floor = nic_.time().stamp_base + nearest_distance_;
    // The read must not sit before anything this node has seen: its own isochrons, and
    // its own copies as they stand (what they hold, notices of what ran in those pulses,
    // and everything a barrier waited for).
    const order_point earliest = std::max(last_, order_point{through_, nodes, 0, 0});
    const same_host_reads::outcome got =
        window_reads_.try_serve(owner, earliest, next_stamp_floor, at);
    if (got == same_host_reads::outcome::served) break;
    if (got == same_host_reads::outcome::declined) return false;
    if (got == same_host_reads::outcome::owner_behind) {
      bool did = false;
      if (absl::Status s = loop_.progress(did); !s.ok()) return s;
    }
    if (attempt % 8 == 7) std::this_thread::yield();
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
  if (absl::Status s = loop_.progress_now_and_then(); !s.ok()) return s;
  return true;
}

}  // namespace iso::runtime
