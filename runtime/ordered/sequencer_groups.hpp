// The host's side of sequenced groups (nicfw/multicast_service.hpp): it hands a group's
// batches to the NIC, keeping to the NIC's window, and files what the NIC delivers into
// each group's inbox, split back into the messages a batch carries. Every member's NIC
// delivers a group's batches in one order, so the inboxes fill in one order too.
//
//   sequencer_groups groups(loop, service, nicfw::tree_shape::binary, absl::Seconds(60));
//   groups.open(7, {0, 1, 2});                     // on every member, before any sends
//   ISO_RETURN_IF_ERROR(groups.send(7, batch));    // batch: [u32 length, bytes]...
//   ISO_RETURN_IF_ERROR(loop.wait_for([&] { return !groups.inbox(7).empty(); }));
//
// One thread uses it (the node's application thread).
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "absl/container/node_hash_map.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "nicfw/multicast_service.hpp"
#include "runtime/ordered/batch_framing.hpp"
#include "runtime/progress/event_loop.hpp"

namespace iso::runtime {

class sequencer_groups final : public delivery_unit {
 public:
  // Registers with `loop`, whose NIC runs `service`. `window_timeout`: how long send() waits
  // for the NIC's window before it gives up.
  sequencer_groups(event_loop& loop, nicfw::multicast_service& service, nicfw::tree_shape shape,
                   absl::Duration window_timeout);

  // Starts filing deliveries of `group` (members sorted and distinct, this node among
  // them; the lowest member's NIC holds the counter).
  void open(std::uint32_t group, std::span<const comm::node_id> members);
  // Hands one batch (length-prefixed messages) to the NIC for `group`, after waiting for
  // the NIC's window. Errors: DeadlineExceeded when the window stays full for
  // `window_timeout` (a member does not take what it was sent; the batch is not sent), the
  // node's failure.
  [[nodiscard]] absl::Status send(std::uint32_t group, std::span<const std::byte> batch);
  // The largest batch send() takes for a group of `members` members.
  [[nodiscard]] std::size_t max_batch(std::size_t members) const;
  // The group's deliveries, in order. The reference stays valid as long as this unit: a
  // reader may keep it (the objects' order does, and looks at it every round).
  [[nodiscard]] std::deque<ordered_delivery>& inbox(std::uint32_t group) {
    return groups_[group].inbox;
  }

  void on_delivery(const nicfw::delivery& d) override;
  [[nodiscard]] absl::Status end_round(std::uint64_t closed, bool& did_work) override;

 private:
  struct group_state {
    std::vector<comm::node_id> members;
    std::deque<ordered_delivery> inbox;
  };

  event_loop& loop_;
  nicfw::multicast_service& service_;
  nicfw::tree_shape shape_;
  absl::Duration window_timeout_;
  // Node-based: the inboxes stay where they are (see inbox()).
  absl::node_hash_map<std::uint32_t, group_state> groups_;
  std::uint64_t consumed_unreported_ = 0;
};

}  // namespace iso::runtime
