// The isotach order of ordered groups: a group's batch is an isochronous message to every
// member (this node included), filed into the group's inbox by a handler of the runtime at
// the isochron's logical time. Every node executes all isochrons in one (pulse, pid, rank)
// order, so every member files a group's batches in one order, and that order is also the
// order of every shared-variable operation: a batch added to an isochron beside writes
// takes effect with them, atomically. A node's isochrons execute in issue order, so each
// sender's batches stay in order (per-sender FIFO).
//
//   isotach_groups groups(smm, loop);
//   groups.open(7, {0, 1, 2});                     // on every member, before any sends
//   ISO_RETURN_IF_ERROR(groups.send(7, batch));    // an isochron of its own
//   ISO_RETURN_IF_ERROR(smm.begin());              // or beside other operations:
//   ISO_RETURN_IF_ERROR(groups.add(7, batch));
//   ISO_RETURN_IF_ERROR(smm.end());
//
// One thread uses it (the node's application thread).
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "absl/container/node_hash_map.h"
#include "absl/status/status.h"
#include "runtime/ordered/batch_framing.hpp"
#include "runtime/progress/event_loop.hpp"
#include "runtime/smm/shared_memory_manager.hpp"

namespace iso::runtime {

// The handler id of ordered groups' batches, reserved for the runtime (beside node::quiet's).
inline constexpr std::uint32_t kOrderedGroupHandler = 0xfffffffeu;

class isotach_groups {
 public:
  // Registers the handler with `smm`; a malformed batch fails `loop`.
  isotach_groups(shared_memory_manager& smm, event_loop& loop);

  // Starts filing batches of `group` (members sorted and distinct, this node among them).
  void open(std::uint32_t group, std::span<const comm::node_id> members);
  // Adds `batch` (length-prefixed messages) for `group` to the open isochron: a message to
  // each member. Errors: the SMM's (ResourceExhausted when the isochron would outgrow the
  // NIC's record); nothing is added then.
  [[nodiscard]] absl::Status add(std::uint32_t group, std::span<const std::byte> batch);
  // The same in an isochron of its own; blocks while the NIC's queue is full or credits are
  // used up. FailedPrecondition while an isochron is open.
  [[nodiscard]] absl::Status send(std::uint32_t group, std::span<const std::byte> batch);
  // The largest batch add() and send() take for a group of `members` members.
  [[nodiscard]] std::size_t max_batch(std::size_t members) const;
  // The group's deliveries, in order. The reference stays valid as long as this unit: a
  // reader may keep it (the objects' order does, and looks at it every round).
  [[nodiscard]] std::deque<ordered_delivery>& inbox(std::uint32_t group) {
    return groups_[group].inbox;
  }

 private:
  struct group_state {
    std::vector<comm::node_id> members;
    std::deque<ordered_delivery> inbox;
  };
  // The group's id before the batch, so that one handler serves every group.
  struct batch_header {
    std::uint32_t group = 0;
    std::uint32_t reserved = 0;
  };

  void on_batch(comm::node_id source, std::span<const std::byte> payload);

  shared_memory_manager& smm_;
  event_loop& loop_;
  // Node-based: the inboxes stay where they are (see inbox()).
  absl::node_hash_map<std::uint32_t, group_state> groups_;
  std::vector<std::byte> scratch_;  // header + batch
};

}  // namespace iso::runtime
