// Same-host reads (docs/same-host-reads.md): a read-only isochron whose reads all go to one
// node is served straight from that node's memory window, when logical time allows, instead
// of through the NIC. Part of the SMM, kept apart: it places the read in the global order
// (order_point) against this node's own isochrons and copies.
#include <algorithm>
#include <thread>

#include "runtime/smm/shared_memory_manager.hpp"

namespace iso::runtime {

absl::StatusOr<bool> shared_memory_manager::serve_lone_read() {
  const page_info& page = *lone_read_.page;
  if (!hit_.empty()) return false;
  if (!page.local()) {
    direct_ops_.clear();
    if (!note_direct_read(page.read_target, page, lone_read_.address, lone_read_.count, 0,
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

bool shared_memory_manager::note_direct_read(node_id owner, const page_info& page,
                                             std::uint64_t address, std::uint32_t count,
                                             std::uint32_t index, std::uint32_t slot,
                                             std::uint32_t first) {
  if (!peers_[owner].present() || page.read_target != owner ||
      page.target_index >= peers_[owner].capacity()) {
    return false;
  }
  direct_ops_.push_back({address, count, index, slot, first,
                         peers_[owner].page(page.target_index) + pages_.offset_in_page(address)});
  return true;
}

bool shared_memory_manager::note_direct_reads(node_id owner, std::span<const std::byte> stream) {
  op_reader in(stream);
  stream_header header;
  if (!in.get(header)) return false;
  direct_ops_.clear();
  while (!in.done()) {
    op_header op;
    read_body body;
    if (!in.get(op) || op.code != op_code::read || !in.get(body)) return false;
    const page_info* page = pages_.lookup(op.address);
    if (page == nullptr ||
        !note_direct_read(owner, *page, op.address, op.count, op.index, body.slot, body.first)) {
      return false;
    }
  }
  return true;
}

absl::StatusOr<bool> shared_memory_manager::serve_direct_reads(node_id owner) {
  const window_reader& peer = peers_[owner];
  std::size_t total = 0;
  for (const direct_op& op : direct_ops_) total += op.count;
  direct_values_.resize(total);
  const std::uint32_t nodes = nic_.topo().nodes();
  order_point at;
  bool owner_behind = false;
  // The owner's copies may stand behind what this node has seen, until it runs its next
  // round; waiting a little for that is cheaper than the NIC path, which needs that round
  // too and then moves this node further on in logical time (so the next read would
  // wait again). Bounded: an owner busy elsewhere gets the NIC path's request instead.
  constexpr int kAttempts = 1024;
  for (int attempt = 0;; ++attempt) {
    if (attempt == kAttempts) return false;
    // Every isochron this node stamps from now on executes at this pulse or later (its NIC
    // stamps at least its current pulse plus the distance to the nearest node). The read
    // must sit before them all; with several switches, another node's copies may already
    // stand further on in logical time (its pulses close sooner).
    const std::uint64_t next_stamp_floor = nic_.time().pulse + nearest_distance_;
    // The read must not sit before anything this node has seen: its own isochrons, and
    // its own copies as they stand (what they hold, notices of what ran in those pulses,
    // and everything a barrier waited for).
    const order_point earliest = std::max(last_, order_point{through_, nodes, 0, 0});
    owner_behind = false;
    const window_reader::outcome got = peer.snapshot([&](const window_stand& stand) {
      at = {stand.through, nodes + owner, stand.next_local, 0};
      if (stand.through >= next_stamp_floor) return false;  // later isochrons could sit earlier
      if (at < earliest) {
        owner_behind = true;
        return false;
      }
      std::size_t k = 0;
      for (const direct_op& op : direct_ops_) {
        for (std::uint32_t i = 0; i < op.count; ++i) {
          const shared_variable v = window_reader::load(op.vars[i]);
          // Waits for an assign: the owner's pending-read table handles that.
          if (v.sched_by != 0) return false;
          direct_values_[k++] = v.value;
        }
      }
      return true;
    });
    if (got == window_reader::outcome::consistent) break;
    if (got == window_reader::outcome::declined) {
      if (!owner_behind) return false;
      bool did = false;
      if (absl::Status s = loop_.progress(did); !s.ok()) return s;
    }
    if (attempt % 8 == 7) std::this_thread::yield();
  }
  last_ = at;
  ++direct_reads_;
  std::size_t k = 0;
  for (const direct_op& op : direct_ops_) {
    const auto values = std::span(direct_values_).subspan(k, op.count);
    if (op.first == 0 && op.count == slots_.size(op.slot)) {
      slots_.fill_all(op.slot, values);
    } else if (absl::Status s = slots_.fill(op.slot, op.first, values); !s.ok()) {
      return s;
    }
    if (options_.trace) {
      for (std::uint32_t i = 0; i < op.count; ++i) {
        trace_.push_back({.pulse = at.pulse,
                          .after_pulse = true,
                          .pid = owner,
                          .rank = at.rank,
                          .op_index = op.index,
                          .op = trace_op::read,
                          .address = op.address + i,
                          .value = values[i],
                          .node = owner,
                          .direct = true,
                          .issuer = self_,
                          .issue_rank = builder_.rank()});
      }
    }
    k += op.count;
  }
  if (absl::Status s = loop_.progress_now_and_then(); !s.ok()) return s;
  return true;
}

}  // namespace iso::runtime
