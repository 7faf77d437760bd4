// Multicast forwarded NIC to NIC, and sequenced delivery over it (LFC's MCAST and Panda's
// GSB, "get sequence number, then broadcast"; Bhoedjang sections 3.2 and 5.8).
//
// Multicast. The host submits a message for a group (any sorted subset of the job that
// includes it; groups may overlap) and a tree shape (multicast_tree.hpp). Its NIC sends it
// to its children in the sender's tree; every NIC that receives it hands it to its host and
// sends it on to its own children, without that host. Every member gets the message, the
// sender included; messages of one sender to one group arrive in the order it sent them.
//
// Credits. A NIC sends to each peer in lanes: one per origin (the sending node) for
// unsequenced multicasts, with `window` credits, and one per sequenced group, with
// `sequencer_window`. A message travels in one lane on every link (its origin's or its
// group's) and is counted on the receiving NIC until its host took the message
// (host_consumed()) and the NIC forwarded it to every child; then one credit of its lane goes
// back to the parent that sent it. A member whose host does not poll therefore stops its
// parent's forwarding once a lane's credits wait for it, which stops the parent's parent, and
// so on up to the senders, whose NICs decline new submissions: nothing is lost and every
// buffer is bounded (per peer, `window` messages per origin plus `sequencer_window` per
// sequenced group, plus the sender's own `window`).
//
// No shape and no mix of groups can deadlock, as long as hosts poll: a message waits only
// for the lanes of its own origin or group, so a cycle of full lanes would have to lie within
// one origin's or one group's. An origin r has none: every tree rooted at r, of any group and
// shape, places the members at positions 0, 1, ... in the order of their distance from r
// around the ring of node ids ((node - r) mod n; multicast_tree.hpp) and gives every child a
// higher position than its parent, so every link that carries r's messages leads farther
// from r. The farthest node forwards nothing of r's and frees its credits as its host polls;
// then the next farthest can forward, and so on back to r. A sequenced group has none
// either: a cycle of full lanes would need more of its messages in flight than the sequencer
// hands out (below). The host keeps to its own window with host_may_submit(), so the NIC
// never has to decline.
//
// A lane with all its credits back, nothing blocked and none of the peer's messages held is
// what a fresh one would be, and is erased (lanes_held() counts the others): a NIC keeps
// lanes for the traffic in flight, not for every origin and group it ever carried. What a
// group leaves behind for good is its numbering, a few words per group, since its numbers
// go on where they stopped: for a sequenced group its counter at the sequencer and each
// member's next number; for an unsequenced one each sender's message index in it. A NIC
// also keeps its place in at most 256 + 2n trees of a job of n nodes (by group, root and
// shape, checked against each message's members), so that a group's messages do not work
// it out again each time.
// Only credits that are out come back, and a peer sends only while it has credits, so these are
// errors naming the sending node and the lane, and leave the lane as it was: a credit packet for a
// lane in which this NIC has no credits out to its sender (one it never sent in, or a sender that
// is no child of it in that lane's trees), one returning no credits or more than are out, a stamp
// naming no lane, and a multicast beyond its lane's window.
//
// Sequenced delivery. A submission flagged sequenced takes a number from its group's
// counter, held by the NIC of the group's sequencer node (a fetch-and-add counter answered
// by that NIC, never by its host), before it is multicast. Every member's NIC holds a
// message back until every lower number of its group was delivered, so every member
// delivers the group's messages in one order. The NIC asks for a number only once it holds
// the whole message, so a number taken is always followed by its message; a submission
// flagged null takes a number and sends a null in its place (a host that gives a number
// back), which fills the gap at every member and is not delivered. The counter hands out
// number n only while n < d + `sequencer_window`, d being the fewest messages of the group
// any member delivered (members report their progress to the sequencer's NIC): a member's
// hold-back queue never exceeds `sequencer_window` messages, and no more of a group's
// messages are in flight than its lanes' credits.
//
// Submission kMulticastSubmission: its payload is a multicast_prefix (root = this node;
// sequence ignored), the members (node ids, sorted, distinct), then the message. Delivery
// kMulticastDelivery: source = the sender, sequence = the group, stamp = the message's
// number (sequenced) or its index among the sender's messages to that group, payload = the
// message. After handling one, the host calls host_consumed().
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "nicfw/multicast_tree.hpp"
#include "nicfw/service.hpp"
#include "nicfw/service_numbers.hpp"

namespace iso::nicfw {

inline constexpr auto kMulticastSubmission = service_submission(kMulticastNumbers, 0);
inline constexpr auto kMulticastDelivery = service_delivery(kMulticastNumbers, 0);

// Packets between NICs: a multicast (its body as a submission's payload), and credits
// going back to a tree parent (a = how many, stamp = the lane: kMulticastGroupLane + group
// for a sequenced group's, the origin node for an unsequenced one's).
inline constexpr auto kMulticastDataPacket = service_packet(kMulticastNumbers, 0);
inline constexpr auto kMulticastCreditPacket = service_packet(kMulticastNumbers, 1);
inline constexpr std::uint64_t kMulticastGroupLane = std::uint64_t{1} << 32;

inline constexpr std::uint8_t kMulticastSequenced = 1;
inline constexpr std::uint8_t kMulticastNull = 2;  // with kMulticastSequenced

// Leads every multicast packet's body and every submission's payload; the members follow,
// then the message.
struct multicast_prefix {
  std::uint32_t root = 0;   // the sender
  std::uint32_t group = 0;  // the host's name for the group (the same on every member)
  std::uint64_t sequence = 0;
  std::uint32_t sequencer = 0;  // sequenced: the node whose NIC holds the group's counter
  std::uint16_t members = 0;
  tree_shape shape = tree_shape::binary;
  std::uint8_t flags = 0;
};
static_assert(sizeof(multicast_prefix) == 24);

struct multicast_options {
  // Unsequenced messages of one origin in flight to one peer (a lane's credits), and this
  // node's own messages not yet finished here.
  std::uint32_t window = 128;
  // Numbers of one group handed out, not delivered (and a sequenced lane's credits).
  std::uint32_t sequencer_window = 32;
};

class multicast_service final : public nic_service {
 public:
  static const service_binding kBinding;

  multicast_service(nic_context& nic, multicast_options options);

  [[nodiscard]] absl::Status on_packet(comm::node_id source, const packet_header& header,
                                       comm::byte_span body) override;
  [[nodiscard]] absl::Status on_submission(const submission& s, bool& taken) override;
  [[nodiscard]] absl::Status poll(bool& did_work) override;

  // Host thread: it is done with `count` more multicast deliveries (in delivery order).
  // Wake the NIC afterwards: the credits this frees may be what its peers wait for.
  void host_consumed(std::uint64_t count) {
    consumed_.store(consumed_.load(std::memory_order_relaxed) + count, std::memory_order_release);
  }
  // Host thread: whether this node may submit another multicast (fewer than `window` of its
  // own are unfinished), and that it did. A host that submits beyond it finds its queue
  // stuck behind the NIC declining (and an idle NIC thread spinning on it).
  [[nodiscard]] bool host_may_submit() const {
    return host_submitted_ - finished_.load(std::memory_order_acquire) < options_.window;
  }
  void host_submitted() { ++host_submitted_; }

  // The credits, queues, hold-back and counters, for a stalled test's message (the NIC's
  // thread, or a stopped NIC).
  [[nodiscard]] std::string describe() const;

  // Messages this NIC holds (waiting for a child's credits, the host, or lower numbers),
  // now and at most so far; any thread.
  [[nodiscard]] std::size_t messages_held() const {
    return live_messages_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] std::size_t peak_messages_held() const {
    return peak_live_messages_.load(std::memory_order_relaxed);
  }
  // Lanes this NIC keeps, to all peers (each busy: credits out, messages blocked, messages
  // of the peer's held or credits owed; idle ones are erased); any thread.
  [[nodiscard]] std::size_t lanes_held() const {
    return live_lanes_.load(std::memory_order_relaxed);
  }

 private:
  struct message;
  using message_ptr = std::shared_ptr<message>;
  // Flow control of one lane to one peer: the messages of one origin (unsequenced) or of one
  // sequenced group. A lane with all its credits, nothing blocked and none of the peer's
  // messages held (so nothing owed) is what a fresh one would be: it is erased, so lanes do
  // not pile up with the groups ever used.
  struct lane {
    std::uint32_t credits = 0;        // messages we may still send to it
    std::deque<message_ptr> blocked;  // waiting for its credits, in order
    std::uint32_t owed = 0;           // credits we owe it
    std::uint32_t held = 0;           // its messages we took and have not credited yet
  };
  struct peer {
    absl::flat_hash_map<std::uint64_t, lane> lanes;  // by lane id (lane_id())
  };
  // A lane with credits owed.
  struct owed_lane {
    comm::node_id peer = 0;
    std::uint64_t lane = 0;
  };
  // A member's view of a sequenced group.
  struct hold_back {
    std::uint64_t next = 0;  // the number delivered next
    std::map<std::uint64_t, message_ptr> waiting;
    std::uint64_t reported = 0;  // `next` as the sequencer last heard it
    comm::node_id sequencer = 0;
    bool listed = false;  // in progressed_
  };
  // The sequencer's counter of a group.
  struct counter {
    std::uint64_t next = 0;
    std::vector<comm::node_id> members;
    std::vector<std::uint64_t> delivered;  // by member index
    std::deque<comm::node_id> deferred;    // requests beyond the window, in order
  };
  // The sender's messages of a group waiting for their numbers, from `first` on. Inline:
  // most of the time one is, and a group's entry comes and goes with each message (it is
  // erased once none waits, and the taken slots are dropped once they are half of them).
  struct numbering {
    absl::InlinedVector<message_ptr, 2> messages;
    std::size_t first = 0;
    [[nodiscard]] std::size_t waiting() const { return messages.size() - first; }
  };
  // Where this node stands in one tree, kept while the same trees carry the messages: a
  // group's messages from one root all take the same place.
  struct tree_key {
    std::uint32_t group = 0;
    comm::node_id root = 0;
    tree_shape shape = tree_shape::binary;
    friend bool operator==(const tree_key&, const tree_key&) = default;
    template <typename H>
    friend H AbslHashValue(H h, const tree_key& k) {
      return H::combine(std::move(h), k.group, k.root, k.shape);
    }
  };
  struct known_place {
    std::vector<comm::node_id> members;
    std::optional<tree_place> place;  // none: this node or the root is not a member
  };

  [[nodiscard]] absl::Status on_data(comm::node_id source, comm::byte_span body);
  // This node's place in the tree `m` travels along; null when this node or its root is
  // not a member. Valid until the next call.
  [[nodiscard]] const tree_place* place_of(const message& m);
  // Sends `m` on to its children and takes it in here (delivery or hold-back).
  [[nodiscard]] absl::Status spread(const message_ptr& m);
  [[nodiscard]] absl::Status send_to(comm::node_id child, const message_ptr& m);
  [[nodiscard]] absl::Status flush_blocked(comm::node_id to, lane& l);
  // The lane `id` to `to`, added with all its credits when there is none.
  [[nodiscard]] lane& lane_to(comm::node_id to, std::uint64_t id);
  // Erases the lane `id` to `to` when it is idle. No credit packet can come for it then: a
  // peer returns only credits that are out.
  void release_if_idle(comm::node_id to, std::uint64_t id);
  [[nodiscard]] std::uint32_t lane_window(std::uint64_t id) const;
  [[nodiscard]] absl::Status on_credit(comm::node_id from, const packet_header& header);
  void deliver(const message_ptr& m);
  void step_done(const message_ptr& m);
  [[nodiscard]] absl::Status take_in(const message_ptr& m);
  // Sequencer side.
  [[nodiscard]] absl::Status on_request(comm::node_id from, comm::byte_span body);
  [[nodiscard]] absl::Status grant(std::uint32_t group, counter& c);
  [[nodiscard]] absl::Status answer(comm::node_id to, std::uint32_t group, std::uint64_t number);
  [[nodiscard]] absl::Status on_number(std::uint32_t group, std::uint64_t number);
  [[nodiscard]] absl::Status on_progress(comm::node_id from, std::uint32_t group,
                                         std::uint64_t delivered);
  [[nodiscard]] absl::Status report_progress(bool& did_work);

  nic_context& nic_;
  multicast_options options_;
  std::vector<peer> peers_;
  std::vector<owed_lane> owing_;  // lanes with owed credits
  absl::flat_hash_map<std::uint32_t, hold_back> hold_backs_;
  absl::flat_hash_map<std::uint32_t, counter> counters_;
  absl::flat_hash_map<std::uint32_t, numbering> numberings_;
  absl::flat_hash_map<tree_key, known_place> places_;
  absl::flat_hash_map<std::uint64_t, std::uint64_t> sent_index_;  // (group) -> next index
  std::vector<std::uint32_t> progressed_;  // groups whose `next` moved since reported
  std::vector<std::uint32_t> progress_scratch_;
  std::deque<message_ptr> at_host_;  // delivered, not yet consumed, in order
  std::atomic<std::uint64_t> consumed_{0};
  std::uint64_t consumed_seen_ = 0;
  std::atomic<std::uint64_t> finished_{0};  // this node's messages finished here
  std::uint64_t host_submitted_ = 0;        // host only
  std::uint32_t own_live_ = 0;              // this node's messages not yet finished here
  std::atomic<std::size_t> live_messages_{0};
  std::atomic<std::size_t> peak_live_messages_{0};
  std::atomic<std::size_t> live_lanes_{0};
};

}  // namespace iso::nicfw
