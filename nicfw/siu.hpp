// The switch interface unit: this node's view of logical time.
//
// Pulses are numbered by tokens. The SIU sends tokens 1, 2, 3, ... to its switch's TM and,
// for pulses others want, may send token q once it has received TM token q - K (K tokens in
// flight per loop); after stamping it goes to its last stamp at once, which only raises
// its later stamps and spares the receivers a round trip through this node.
// An isochron issued while the SIU is at pulse t (the last token it sent) is stamped
//   R = max(R_prev, t + delta)   (isotach invariant: R never decreases, DESIGN section 3)
// where delta is the largest logical distance to its destinations. Receiving TM token q
// means every sender's future stamps for this node are >= q, so pulses < q can close once
// every isotach packet already sent here has arrived: TM tokens carry, per sender, the
// cumulative number of isotach packets it had sent to this node, and the SIU closes the
// pulses once it has received that many from each. Counting makes the order of tokens and
// data on different paths irrelevant, so logical time need not be held while an isochron
// is sent: a receiver simply waits for the packets its token announced.
//
// Time is lazy: the SIU advances only while someone needs a later pulse (`want`), and only
// to want - K, which is all its TM needs to send token `want` (or to its own last stamp,
// where that is further); an idle job sends no tokens,
// and so costs no CPU. An SIU idle for a while parks: it promises to stamp nothing until
// its TM unparks it, and the TM stops waiting for its tokens.
//
// When the switch's TM is replicated (topology.proto), everything that would go to the TM
// (tokens, demands, park and unpark) goes to every copy; a token to a copy carries only the
// count for that copy's node, and unparking waits for every copy's answer.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <vector>

#include "absl/status/status.h"
#include "nicfw/outbound.hpp"
#include "nicfw/topology.hpp"
#include "nicfw/wire.hpp"

namespace iso::nicfw {

class token_manager;

class siu {
 public:
  siu(comm::node_id self, const topology& topo, outbound& out);

  // Whether the SIU may stamp now. A parked SIU must first unpark (request_unpark()) and
  // wait for its TM's answer.
  [[nodiscard]] bool may_stamp() const { return state_ == state::active; }
  // Whether it has asked its TMs to unpark it and some have yet to answer.
  [[nodiscard]] bool unparking() const { return state_ == state::unparking; }
  [[nodiscard]] absl::Status request_unpark();
  void on_unparked(std::uint64_t resume_from);

  // Stamps an isochron whose largest destination distance is `delta`; returns R.
  // Precondition: may_stamp().
  std::uint64_t stamp(std::uint32_t delta);
  // Records one isotach packet sent to `destination` (after stamp()).
  void count_sent(comm::node_id destination);

  // Inbound, already validated by the engine.
  void on_tm_token(std::uint64_t token, std::uint64_t want, std::span<const count_entry> counts);
  void on_demand(std::uint64_t want);
  // A demand from this node's host (e.g. a barrier that must see a pulse close).
  void on_host_demand(std::uint64_t want);
  // FailedPrecondition when the packet arrives for a pulse that is already closed: the
  // isotach invariant was broken (a bug, or a peer that does not follow the protocol).
  [[nodiscard]] absl::Status on_iso_data(comm::node_id source, std::uint64_t stamp);

  // This node's NIC runs the TM (or the TM copy) of the SIU's switch: tokens, demands, park
  // and unpark reach it by a call instead of a packet, and it answers the same way
  // (token_manager::attach_local_siu).
  void attach_local_tm(token_manager& tm);

  // When a token goes to the TMs on other nodes: `now`, right behind a batch of isotach
  // data (every receiver needs it to close its pulse); or when the engine calls
  // send_owed_tokens(), so that a pulse this node's own TM copy has just closed reaches the
  // host first.
  enum class remote_tokens { now, next_round };

  // Sends the tokens and demands that are due; returns whether it sent anything.
  [[nodiscard]] absl::Status advance(bool& did_work,
                                     remote_tokens when = remote_tokens::next_round);
  // The NIC is about to sleep: an active SIU whose last round had nothing to do parks now
  // (sets did_work when it does), so that others need not wake the NIC for its tokens.
  [[nodiscard]] absl::Status rest(bool& did_work);

  // Sends the last token to the TMs on other nodes if they have not had it.
  [[nodiscard]] absl::Status send_owed_tokens(bool& did_work);
  [[nodiscard]] bool owes_tokens() const { return owes_tokens_; }

  // Every pulse <= closed() is complete here: no isotach packet for it can still arrive.
  [[nodiscard]] std::uint64_t closed() const { return closed_; }
  [[nodiscard]] std::uint64_t pulse() const { return pulse_; }
  // Every isochron stamped from now on is stamped at least this plus its distance. Active,
  // that is pulse(). Parked, the SIU resumes no lower than the TM tokens it has received
  // (which go on arriving while it is parked): those went out before the TM saw the unpark
  // it has yet to send, and the TM resumes it from its last token (token_manager::
  // on_unpark). Unparking, a token received may be newer than the TM's answer: pulse().
  [[nodiscard]] std::uint64_t stamp_base() const {
    return state_ == state::parked ? std::max(pulse_, tm_token_) : pulse_;
  }
  // The highest token anyone needs, as known here (the SIU itself goes to want - K).
  [[nodiscard]] std::uint64_t want() const { return want_; }
  [[nodiscard]] std::uint64_t last_stamp() const { return last_stamp_; }

 private:
  enum class state { active, parked, unparking };
  [[nodiscard]] absl::Status park();
  [[nodiscard]] absl::Status send_token(packet_type type, std::uint64_t token, remote_tokens when);
  // Sends `type` to every TM on another node (which then owes nothing).
  [[nodiscard]] absl::Status send_token_to_remote_tms(packet_type type, std::uint64_t token);
  [[nodiscard]] absl::Status send_token_to(comm::node_id tm, packet_type type, std::uint64_t token);
  [[nodiscard]] absl::Status send_demand();
  // Sends one header-only packet (a demand or an unpark) to every TM node.
  [[nodiscard]] absl::Status send_to_tms(const packet_header& header);
  void close_what_arrived();

  comm::node_id self_;
  std::vector<comm::node_id> tm_nodes_;    // the TM, or every copy of a replicated one
  std::vector<comm::node_id> remote_tms_;  // those reached by packets: all but a local one
  bool replicated_;
  std::uint16_t switch_;  // this node's switch, whose TM gets our tokens
  std::uint64_t tokens_per_loop_;
  outbound& out_;
  token_manager* local_tm_ = nullptr;
  std::uint64_t pulse_ = 0;          // last token sent
  std::uint64_t tm_token_ = 0;       // last TM token received
  std::uint64_t resume_floor_ = 0;   // the pulse the SIU last resumed from after parking
  std::uint64_t want_ = 0;           // highest token number anyone needs, as known here
  std::uint64_t reported_want_ = 0;  // the TM knows someone needs this much
  state state_ = state::active;
  std::size_t unpark_answers_ = 0;  // copies that have yet to answer an unpark
  std::uint32_t idle_rounds_ = 0;   // advance() calls with nothing to do, while active
  bool owes_tokens_ = false;        // TMs on other nodes have not had token pulse_ yet
  std::uint64_t last_stamp_ = 0;
  std::uint64_t closed_ = 0;
  struct expectation {
    std::uint64_t token;
    std::vector<count_entry> counts;
  };
  void require(const count_entry& entry);
  std::deque<expectation> expected_;          // TM tokens not yet applied, in order
  bool front_applied_ = false;                // expected_.front()'s counts are in required_
  std::vector<std::uint64_t> required_;       // per sender: packets that must have arrived
  std::vector<std::uint64_t> received_from_;  // per sender: packets that have arrived
  std::uint32_t unsatisfied_ = 0;             // senders with received_from_ < required_
  std::vector<std::uint64_t> sent_;           // cumulative isotach packets sent, per destination
  std::vector<comm::node_id> dirty_;          // destinations whose count no token has carried yet
  std::vector<bool> is_dirty_;
  std::vector<count_entry> scratch_entries_;
};

}  // namespace iso::nicfw
