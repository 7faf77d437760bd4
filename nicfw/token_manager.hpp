// A token manager: one per switch of the logical topology, run by the NIC of the node the
// topology names. Its inputs and outputs are the SIUs attached to its switch and the TMs
// of adjacent switches. It sends token q to all of them once it has received token q - K
// from all of them (K tokens in flight per loop), so a node at h links from another knows
// that one has passed pulse q - h*K: that is where logical distance comes from. A token
// stands for every token before it, so a burst travels as its last token.
//
// Tokens also carry, per (sender, destination) pair, the cumulative number of isotach
// packets sent; the TM forwards each count only towards its destination's switch, so every
// SIU learns how many packets to expect from each sender before closing a pulse. The
// switch graph is a tree, so each count reaches its destination along one path.
//
// Demands (someone needs token W) are flooded to every input that has not announced it,
// so idle SIUs start advancing when, and only when, there is work; the TM itself sends no
// token beyond the highest demand. A parked SIU is not waited for at all.
//
// A replicated TM (topology.proto, replicate_tm) is one of several identical copies, one per
// attached node, each fed every SIU's tokens. It computes what the single TM would and
// sends tokens, counts and demands to its own node's SIU only: the other copies serve the
// others.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "nicfw/outbound.hpp"
#include "nicfw/topology.hpp"
#include "nicfw/wire.hpp"

namespace iso::nicfw {

class siu;

class token_manager {
 public:
  // `self` is the node whose NIC runs this TM (the copy's node, for a replicated TM).
  token_manager(std::uint32_t switch_index, comm::node_id self, const topology& topo,
                outbound& out);

  [[nodiscard]] std::uint32_t switch_index() const { return switch_; }

  // The SIU of this NIC's node, when it is attached to this switch: its tokens, demands and
  // unpark answers are calls instead of packets (siu::attach_local_tm).
  void attach_local_siu(siu& s) { local_siu_ = &s; }

  // Inbound, from an SIU attached to this switch or from an adjacent TM. Errors
  // (InvalidArgument) name the sender when it is not an input of this TM or skips a token.
  [[nodiscard]] absl::Status on_siu_token(comm::node_id from, std::uint64_t token,
                                          std::uint64_t want, std::span<const count_entry> counts);
  [[nodiscard]] absl::Status on_link_token(std::uint32_t from_switch, std::uint64_t token,
                                           std::uint64_t want, std::span<const count_entry> counts);
  // Parking: the SIU stamps nothing until unparked, so tokens stop waiting for it. Its park
  // message carries its last token number and final counts.
  [[nodiscard]] absl::Status on_park(comm::node_id from, std::uint64_t last_token,
                                     std::span<const count_entry> counts);
  // Answers with `unparked`: the token number the SIU resumes from.
  [[nodiscard]] absl::Status on_unpark(comm::node_id from);
  [[nodiscard]] absl::Status on_siu_demand(comm::node_id from, std::uint64_t want);
  [[nodiscard]] absl::Status on_link_demand(std::uint32_t from_switch, std::uint64_t want);

  // Sends every token that is due; sets did_work when it sent something.
  [[nodiscard]] absl::Status advance(bool& did_work);

  [[nodiscard]] std::uint64_t pulse() const { return pulse_; }

 private:
  struct port {
    bool is_link;
    comm::node_id node;         // the attached SIU's node, or the adjacent TM's host
    std::uint32_t peer_switch;  // links only
    std::uint64_t last_token = 0;
    bool parked = false;
    std::vector<std::uint64_t> dirty{};  // pairs (source * nodes + destination)
  };
  // A pair's cumulative count, and whether it waits in its output port's dirty list (a pair
  // has one output: the port towards its destination).
  struct pair_count {
    std::uint64_t count = 0;
    bool dirty = false;
  };
  static constexpr std::uint32_t kNoPort = ~0u;

  [[nodiscard]] absl::Status take_token(std::size_t input, std::uint64_t token, std::uint64_t want,
                                        std::span<const count_entry> counts, const char* who,
                                        std::uint32_t id);
  [[nodiscard]] absl::Status take_want(std::size_t input, std::uint64_t want);
  // The port of `from`'s SIU, or of the link from `from_switch`; InvalidArgument naming
  // `what` came from where when there is none.
  [[nodiscard]] absl::StatusOr<std::size_t> siu_input(comm::node_id from, const char* what) const;
  [[nodiscard]] absl::StatusOr<std::size_t> link_input(std::uint32_t from_switch,
                                                       const char* what) const;
  void take_count(std::size_t input, const count_entry& entry);
  [[nodiscard]] absl::Status send_token(port& to, std::uint64_t token);
  // Whether tokens, counts and demands go out through `p` (a replicated TM serves its own
  // node only).
  [[nodiscard]] bool serves(const port& p) const { return !replicated_ || p.node == self_; }
  [[nodiscard]] bool is_local_siu(const port& p) const {
    return !p.is_link && p.node == self_ && local_siu_ != nullptr;
  }

  const topology& topo_;
  std::uint32_t switch_;
  comm::node_id self_;
  bool replicated_;
  std::uint64_t tokens_per_loop_;
  outbound& out_;
  siu* local_siu_ = nullptr;
  std::vector<port> ports_;
  // Port of each node's SIU and each adjacent switch's link (kNoPort: not attached here);
  // looked up on every token.
  std::vector<std::uint32_t> siu_port_;                    // by node
  std::vector<std::uint32_t> link_port_;                   // by switch
  absl::flat_hash_map<std::uint64_t, pair_count> counts_;  // by pair
  std::uint64_t pulse_ = 0;
  std::uint64_t want_ = 0;
  std::vector<count_entry> scratch_entries_;
};

}  // namespace iso::nicfw
