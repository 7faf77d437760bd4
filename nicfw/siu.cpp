#include "nicfw/siu.hpp"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "nicfw/wire.hpp"

namespace iso::nicfw {

siu::siu(comm::node_id self, const topology& topo, outbound& out)
    : self_(self),
      tm_node_(topo.switches()[topo.switch_of(self)].tm_host),
      switch_(static_cast<std::uint16_t>(topo.switch_of(self))),
      tokens_per_loop_(topo.tokens_per_loop()),
      out_(out),
      required_(topo.nodes(), 0),
      received_from_(topo.nodes(), 0),
      sent_(topo.nodes(), 0),
      is_dirty_(topo.nodes(), false) {}

std::uint64_t siu::stamp(std::uint32_t delta) {
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
  expected_.push_back({token, {counts.begin(), counts.end()}});
  close_what_arrived();
}

void siu::require(const count_entry& entry) {
  std::uint64_t& required = required_[entry.source];
  if (entry.count <= required) return;
  const bool was_satisfied = received_from_[entry.source] >= required;
  required = entry.count;
  if (was_satisfied && received_from_[entry.source] < required) ++unsatisfied_;
}

void siu::on_demand(std::uint64_t want) { want_ = std::max(want_, want); }

absl::Status siu::on_iso_data(comm::node_id source, std::uint64_t stamp) {
  if (stamp <= closed_) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "isotach packet from node %u stamped %u arrived after pulse %u closed at node %u", source,
        stamp, closed_, self_));
  }
  const std::uint64_t got = ++received_from_[source];
  if (got == required_[source]) --unsatisfied_;
  want_ = std::max(want_, stamp + 1);
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
    expected_.pop_front();
    front_applied_ = false;
  }
}

absl::Status siu::send_token() {
  const std::uint64_t token = pulse_ + 1;
  std::vector<count_entry> entries;
  entries.reserve(dirty_.size());
  for (comm::node_id d : dirty_) {
    entries.push_back({.source = self_, .destination = d, .count = sent_[d]});
    is_dirty_[d] = false;
  }
  dirty_.clear();
  const packet_header header{
      .type = packet_type::siu_token, .to_switch = switch_, .a = self_, .stamp = token};
  const token_body body{.want = want_, .entries = static_cast<std::uint32_t>(entries.size())};
  const comm::byte_span pieces[3] = {std::as_bytes(std::span(&header, 1)),
                                     std::as_bytes(std::span(&body, 1)),
                                     std::as_bytes(std::span(entries))};
  reported_want_ = want_;
  pulse_ = token;
  return out_.send(tm_node_, pieces);
}

absl::Status siu::send_demand() {
  const packet_header header{
      .type = packet_type::demand, .to_switch = switch_, .a = kNoSwitch, .stamp = want_};
  reported_want_ = want_;
  const comm::byte_span piece = std::as_bytes(std::span(&header, 1));
  return out_.send(tm_node_, std::span(&piece, 1));
}

absl::Status siu::advance(bool& did_work) {
  while (pulse_ < want_ && pulse_ + 1 <= tm_token_ + tokens_per_loop_) {
    if (absl::Status s = send_token(); !s.ok()) return s;
    did_work = true;
  }
  if (want_ > reported_want_) {
    if (absl::Status s = send_demand(); !s.ok()) return s;
    did_work = true;
  }
  return absl::OkStatus();
}

}  // namespace iso::nicfw
