// NIC counters: 64-bit fetch-and-add counters held in one node's network interface and
// answered by it, never by that node's host (which may be computing, or not polling, when
// the request comes). For work distribution (a job counter every node takes numbers from)
// and sequence numbers; outside logical time, so they order nothing else.
//
//   iso::counter jobs = node.allocate_counter(/*holder=*/0);   // collective
//   for (;;) {
//     std::uint64_t job = node.fetch_add(jobs, 1).get();       // each value handed out once
//     if (job >= total) break;
//     work(job);
//   }
//
// allocate_counter(holder) is collective: every node makes the same allocations in the same
// order and gets the same counter; it starts at 0, and it exists until the job ends. A
// counter is a value (its holder and its index among the job's counters), so it can be
// copied and sent to other nodes; a counter built from (holder, index) names the counter
// that allocation made, if it did.
//
// node::fetch_add(c, delta) adds `delta` to `c` and hands back a value<std::uint64_t> with
// the value before the add, like a read's: get() blocks until the answer is here. Adds wrap
// as unsigned 64-bit integers (a negative delta, cast, subtracts). One node's adds to one
// counter apply in the order it made them; adds of different nodes in the order they reach
// the holder's NIC. The answer needs no progress from the holder's host when the holder's
// NIC runs on a thread of its own (options::nic = nic_mode::thread, or auto with cores to
// spare); with an inline NIC the holder must be in some runtime call, as for reads.
//
// Same host: when the holder shares this node's host (processes or threads of one job on
// one machine, with memory windows: options::direct_reads), the first 512 counters live in
// the holder's window and fetch_add is one CPU atomic there: its value is ready at once,
// without the NICs. The holder's NIC adds to the same word for callers on other hosts, so
// the two paths together still hand out every value exactly once.
//
// Errors (iso::error, thrown by the call before anything is sent): invalid_argument for a
// holder outside the job (allocate_counter, fetch_add), a default-constructed counter, or
// a counter no allocation made (its index was never allocated, or with another holder).
#pragma once

#include <cstdint>

namespace iso {

using node_id = std::uint32_t;

class counter {
 public:
  // Names no counter: fetch_add refuses it.
  counter() = default;
  counter(node_id holder, std::uint64_t index) : holder_(holder), index_(index) {}

  // The node whose NIC holds the counter.
  [[nodiscard]] node_id holder() const { return holder_; }
  // Its place among the job's counters, in allocation order from 0.
  [[nodiscard]] std::uint64_t index() const { return index_; }
  [[nodiscard]] bool valid() const { return index_ != kNone; }

  friend bool operator==(const counter&, const counter&) = default;

 private:
  static constexpr std::uint64_t kNone = ~std::uint64_t{0};
  node_id holder_ = 0;
  std::uint64_t index_ = kNone;
};

}  // namespace iso
