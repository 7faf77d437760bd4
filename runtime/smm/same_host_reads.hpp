// Same-host reads (docs/same-host-reads.md): the reads of a read-only isochron that all go
// to one other node, served straight from that node's memory window instead of through
// the NIC, when logical time allows. This unit knows the other nodes' windows and takes a
// consistent snapshot of one; the SMM decides where in the global order the reads must sit
// (order_point), makes progress between attempts, and fills the read slots.
//
//   same_host_reads reads(self, pages, windows, page_variables, nodes);
//   if (reads.note_stream(owner, stream)) {
//     order_point at;
//     switch (reads.try_serve(owner, earliest, next_stamp_floor, at)) { ... }
//   }
//
// One thread uses it (the node's application thread).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "absl/time/time.h"
#include "runtime/smm/copy_window.hpp"
#include "runtime/smm/node_id.hpp"
#include "runtime/smm/order_point.hpp"
#include "runtime/smm/page_table.hpp"

namespace iso::runtime {

class same_host_reads {
 public:
  // One noted read: `count` variables from `address`, operation `index` of its isochron,
  // answered into read slot `slot` from position `first`.
  struct noted_read {
    std::uint64_t address;
    std::uint32_t count;
    std::uint32_t index;
    std::uint32_t slot;
    std::uint32_t first;
    const shared_variable* vars;  // in the owner's window
  };

  enum class outcome {
    served,        // the values are in values(), read at the returned place
    owner_behind,  // the owner's copies stand before `earliest`: progress, then try again
    changing,      // the owner was changing its copies: try again
    declined,      // not from the window (a variable waits for its assign, or time forbids)
  };

  // `windows`: every node's memory window by id (empty where it has none); `self`'s own
  // is not read through this unit. `pages` outlives it.
  same_host_reads(node_id self, const page_table& pages,
                  std::span<const std::span<std::byte>> windows, std::uint32_t page_variables,
                  std::uint32_t nodes);

  // Starts noting the reads of another isochron.
  void clear() { reads_.clear(); }
  // Notes a read of `owner`'s copy of `page`; false when that copy is not in a window here.
  [[nodiscard]] bool note(node_id owner, const page_info& page, std::uint64_t address,
                          std::uint32_t count, std::uint32_t index, std::uint32_t slot,
                          std::uint32_t first);
  // Notes every operation of `stream` (an isochron's part for `owner`); false when one is
  // not a read or cannot be served from `owner`'s window.
  [[nodiscard]] bool note_stream(node_id owner, std::span<const std::byte> stream);

  // One attempt to read the noted variables from `owner`'s window at a place `at` no
  // earlier than `earliest`, and before every isochron this node may stamp from now on
  // (they execute at `next_stamp_floor` or later).
  [[nodiscard]] outcome try_serve(node_id owner, const order_point& earliest,
                                  std::uint64_t next_stamp_floor, order_point& at);
  // After owner_behind: tells `owner` that its copies are wanted at `through`.
  void want_owner_at(node_id owner, std::uint64_t through) const { peers_[owner].want(through); }
  // After owner_behind: sleeps until `owner`'s copies stand further on than that attempt
  // saw them, or for at most `timeout` (window_reader::wait_past).
  void wait_for_owner(node_id owner, absl::Duration timeout,
                      absl::FunctionRef<bool()> may_sleep) const {
    peers_[owner].wait_past(seen_through_, timeout, may_sleep);
  }
  // The doorbell `owner` rings when its copies move on.
  [[nodiscard]] comm::doorbell& owner_bell(node_id owner) const {
    return peers_[owner].advanced_bell();
  }

  [[nodiscard]] std::span<const noted_read> reads() const { return reads_; }
  // After `served`: the values, in the order of reads() and their variables.
  [[nodiscard]] std::span<const std::uint64_t> values() const { return values_; }

 private:
  const page_table& pages_;
  std::vector<window_reader> peers_;  // by node; absent where there is no window
  std::vector<noted_read> reads_;
  std::vector<std::uint64_t> values_;
  std::uint64_t seen_through_ = 0;  // the last attempt's stand
  std::uint32_t nodes_ = 0;
};

}  // namespace iso::runtime
