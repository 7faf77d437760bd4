#include "nicfw/siu.hpp"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "base/log.hpp"
#include "nicfw/token_manager.hpp"
#include "nicfw/wire.hpp"

namespace iso::nicfw {

siu::siu(comm::node_id self, const topology& topo, outbound& out)
    : self_(self),
      tm_nodes_(topo.tm_nodes(topo.switch_of(self))),
      remote_tms_(tm_nodes_),
      replicated_(topo.switches()[topo.switch_of(self)].replicated_tm),
      switch_(static_cast<std::uint16_t>(topo.switch_of(self))),
      tokens_per_loop_(topo.tokens_per_loop()),
      out_(out),
      required_(topo.nodes(), 0),
      received_from_(topo.nodes(), 0),
      sent_(topo.nodes(), 0),
      is_dirty_(topo.nodes(), false) {}

namespace {
// advance() rounds with nothing to do before an active SIU parks: long enough that a
// node issuing isochrons back to back, or answering each message it gets, stays active
// (an idle round inline takes tens of nanoseconds), short enough that a node that only
// serves soon leaves the critical path.
constexpr std::uint32_t kIdleRoundsBeforePark = 1024;
}  // namespace

void siu::attach_local_tm(token_manager& tm) {
  local_tm_ = &tm;
  remote_tms_.erase(std::remove(remote_tms_.begin(), remote_tms_.end(), self_), remote_tms_.end());
}

absl::Status siu::request_unpark() {
  if (state_ != state::parked) return absl::OkStatus();
  state_ = state::unparking;
  unpark_answers_ = tm_nodes_.size();
  return send_to_tms(
      {.type = packet_type::unpark, .to_switch = switch_, .a = self_, .stamp = pulse_});
}

void siu::on_unparked(std::uint64_t resume_from) {
  // Resuming after the highest token any copy sent without us keeps every copy's view of
  // this SIU (its pulse is at least what that copy answered) conservative.
  pulse_ = std::max(pulse_, resume_from);
  if (state_ != state::unparking || --unpark_answers_ != 0) return;
  state_ = state::active;
  idle_rounds_ = 0;
  // A copy that answered lower than pulse_ waits for a token from us above its answer, and
  // our own copy's TM tokens may lag pulse_ by more than the window; the window paces the
  // loop but is not what makes stamps safe (counting is), so it opens from here.
  resume_floor_ = pulse_;
}

std::uint64_t siu::stamp(std::uint32_t delta) {
  idle_rounds_ = 0;
  last_stamp_ = std::max(last_stamp_, pulse_ + delta);
  want_ = std::max(want_, last_stamp_ + 1);
  return last_stamp_;
}

void siu::count_sent(comm::node_id destination) {
  ++sent_[destination];
  if (!is_dirty_[destination]) {
    is_dirty_[destination] = true;
    dirty_.push_back(destination);
  }
}

void siu::on_tm_token(std::uint64_t token, std::uint64_t want,
                      std::span<const count_entry> counts) {
  tm_token_ = std::max(tm_token_, token);
  want_ = std::max(want_, want);
  reported_want_ = std::max(reported_want_, want);
  if (!expected_.empty()) {
    expected_.push_back({token, {counts.begin(), counts.end()}});
    close_what_arrived();
    return;
  }
  // Nothing earlier is pending (the usual case): the counts apply at once, and need no copy.
  for (const count_entry& e : counts) require(e);
  if (unsatisfied_ == 0) {
    closed_ = std::max(closed_, token - 1);
    ISO_LOG(nicfw.siu, debug, "node %u closed pulse %u", self_, closed_);
    return;
  }
  expected_.push_back({token, {}});
  front_applied_ = true;
}

void siu::require(const count_entry& entry) {
  std::uint64_t& required = required_[entry.source];
  if (entry.count <= required) return;
  const bool was_satisfied = received_from_[entry.source] >= required;
  required = entry.count;
  if (was_satisfied && received_from_[entry.source] < required) ++unsatisfied_;
}

void siu::on_demand(std::uint64_t want) {
  // It came from the TM, which therefore knows it: never echo it back.
  want_ = std::max(want_, want);
  reported_want_ = std::max(reported_want_, want);
}

void siu::on_host_demand(std::uint64_t want) { want_ = std::max(want_, want); }

absl::Status siu::on_iso_data(comm::node_id source, std::uint64_t stamp) {
  if (stamp <= closed_) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "isotach packet from node %u stamped %u arrived after pulse %u closed at node %u", source,
        stamp, closed_, self_));
  }
  const std::uint64_t got = ++received_from_[source];
  if (got == required_[source]) --unsatisfied_;
  // The sender wants this pulse closed and has told the TM so; nothing to report.
  close_what_arrived();
  return absl::OkStatus();
}

void siu::close_what_arrived() {
  // Tokens are applied one at a time: token q's counts cover pulses < q only, and applying
  // a later token early would only delay closing, never break it.
  while (!expected_.empty()) {
    if (!front_applied_) {
      for (const count_entry& e : expected_.front().counts) require(e);
      front_applied_ = true;
    }
    if (unsatisfied_ != 0) return;
    closed_ = std::max(closed_, expected_.front().token - 1);
    ISO_LOG(nicfw.siu, debug, "node %u closed pulse %u", self_, closed_);
    expected_.pop_front();
    front_applied_ = false;
  }
}

absl::Status siu::send_token(packet_type type, std::uint64_t token, remote_tokens when) {
  if (type == packet_type::park) {
    // A park must come after every token it follows, and the owed ones carry our want.
    bool sent = false;
    if (absl::Status s = send_owed_tokens(sent); !s.ok()) return s;
  }
  reported_want_ = want_;
  pulse_ = token;
  ISO_LOG(nicfw.siu, debug, "node %u sends token %u%s, wanting pulse %u", self_, token,
          type == packet_type::park ? " (parks)" : "", want_);
  // Other nodes first: this node's own TM copy is a function call away.
  if (type == packet_type::siu_token && when == remote_tokens::next_round) {
    owes_tokens_ = !remote_tms_.empty();
  } else if (absl::Status s = send_token_to_remote_tms(type, token); !s.ok()) {
    return s;
  }
  if (local_tm_ == nullptr) return absl::OkStatus();
  return send_token_to(self_, type, token);
}

absl::Status siu::send_owed_tokens(bool& did_work) {
  if (!owes_tokens_) return absl::OkStatus();
  did_work = true;
  return send_token_to_remote_tms(packet_type::siu_token, pulse_);
}

absl::Status siu::send_token_to_remote_tms(packet_type type, std::uint64_t token) {
  owes_tokens_ = false;
  for (comm::node_id tm : remote_tms_) {
    if (absl::Status s = send_token_to(tm, type, token); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status siu::send_token_to(comm::node_id tm, packet_type type, std::uint64_t token) {
  // A park message carries the current pulse (no new token) with the final counts.
  const packet_header header{.type = type, .to_switch = switch_, .a = self_, .stamp = token};
  std::vector<count_entry>& entries = scratch_entries_;
  entries.clear();
  // A TM gets the counts that changed since its last token: each copy of a replicated TM
  // forwards only its own node's count, a single TM forwards them all.
  auto kept = dirty_.begin();
  for (comm::node_id d : dirty_) {
    if (replicated_ && d != tm) {
      *kept++ = d;
      continue;
    }
    entries.push_back({.source = self_, .destination = d, .count = sent_[d]});
    is_dirty_[d] = false;
  }
  dirty_.erase(kept, dirty_.end());
  if (tm == self_ && local_tm_ != nullptr) {
    return type == packet_type::park ? local_tm_->on_park(self_, token, entries)
                                     : local_tm_->on_siu_token(self_, token, want_, entries);
  }
  const token_body body{.want = want_, .entries = static_cast<std::uint32_t>(entries.size())};
  const comm::byte_span pieces[3] = {std::as_bytes(std::span(&header, 1)),
                                     std::as_bytes(std::span(&body, 1)),
                                     std::as_bytes(std::span(entries))};
  return out_.send(tm, pieces);
}

absl::Status siu::send_to_tms(const packet_header& header) {
  const comm::byte_span piece = std::as_bytes(std::span(&header, 1));
  for (comm::node_id tm : remote_tms_) {
    if (absl::Status s = out_.send(tm, std::span(&piece, 1)); !s.ok()) return s;
  }
  if (local_tm_ == nullptr) return absl::OkStatus();
  // Last: the local copy may answer an unpark at once, which must find every request out.
  return header.type == packet_type::unpark ? local_tm_->on_unpark(self_)
                                            : local_tm_->on_siu_demand(self_, header.stamp);
}

absl::Status siu::send_demand() {
  reported_want_ = want_;
  return send_to_tms(
      {.type = packet_type::demand, .to_switch = switch_, .a = kNoSwitch, .stamp = want_});
}

absl::Status siu::advance(bool& did_work, remote_tokens when) {
  // Our TM sends token want_ once every SIU of its switch has sent want_ - K, so that is as
  // far as this SIU needs to go for the pulses others want, as fast as the window lets it
  // (K tokens beyond the last TM token). For its own stamps it goes further, at once: up
  // to its last stamp, past the window. A receiver closes that pulse once every SIU has
  // sent the token just before it, so after this SIU's jump the others close it among
  // themselves; held at the window, the pulse would wait for a round trip through this
  // NIC, which, inline, runs only when its application calls the runtime again (a node
  // that sends and then computes would hold its message back for the whole computation).
  // Stamps stay safe past the window: counting, not pacing, makes them so, and a stamp is
  // at most the largest distance beyond the pulse it was stamped at. Going as far as the
  // last stamp also means that the next node to answer finds this SIU already past what
  // the answer's pulse needs, so that pulse closes without a token from here first.
  const std::uint64_t for_others = want_ > tokens_per_loop_ ? want_ - tokens_per_loop_ : 0;
  const std::uint64_t window = std::max(tm_token_, resume_floor_) + tokens_per_loop_;
  // As many tokens as that allows, sent as the last one (it stands for all).
  const std::uint64_t target = std::max(std::min(for_others, window), last_stamp_);
  const std::uint64_t needed = std::max(for_others, last_stamp_);
  const bool token_due = state_ == state::active && target > pulse_;
  // A token carries want_ itself; a demand is for when none goes out.
  if (want_ > reported_want_ && !token_due) {
    if (absl::Status s = send_demand(); !s.ok()) return s;
    did_work = true;
  }
  if (state_ != state::active) return absl::OkStatus();
  if (token_due) {
    if (absl::Status s = send_token(packet_type::siu_token, target, when); !s.ok()) return s;
    did_work = true;
  }
  if (token_due || pulse_ < needed) {
    idle_rounds_ = 0;
    return absl::OkStatus();
  }
  if (++idle_rounds_ < kIdleRoundsBeforePark) return absl::OkStatus();
  return park();
}

absl::Status siu::rest(bool& did_work) {
  // The last round had nothing to do (idle_rounds_ counts such rounds since the last one
  // that did); a sleeping NIC would have to be woken for every token others need.
  if (state_ != state::active || idle_rounds_ == 0) return absl::OkStatus();
  did_work = true;
  return park();
}

absl::Status siu::park() {
  state_ = state::parked;
  return send_token(packet_type::park, pulse_, remote_tokens::now);
}

}  // namespace iso::nicfw
