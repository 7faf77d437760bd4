#include "nicfw/token_manager.hpp"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "base/check.hpp"
#include "base/log.hpp"
#include "nicfw/siu.hpp"

namespace iso::nicfw {

token_manager::token_manager(std::uint32_t switch_index, comm::node_id self, const topology& topo,
                             outbound& out)
    : topo_(topo),
      switch_(switch_index),
      self_(self),
      replicated_(topo.switches()[switch_index].replicated_tm),
      tokens_per_loop_(topo.tokens_per_loop()),
      out_(out),
      siu_port_(topo.nodes(), kNoPort),
      link_port_(topo.switches().size(), kNoPort) {
  const switch_info& info = topo.switches()[switch_index];
  for (comm::node_id node : info.nodes) {
    siu_port_[node] = static_cast<std::uint32_t>(ports_.size());
    ports_.push_back({.is_link = false, .node = node, .peer_switch = 0});
  }
  for (std::uint32_t neighbour : info.neighbours) {
    link_port_[neighbour] = static_cast<std::uint32_t>(ports_.size());
    ports_.push_back(
        {.is_link = true, .node = topo.switches()[neighbour].tm_host, .peer_switch = neighbour});
  }
}

absl::Status token_manager::on_siu_token(comm::node_id from, std::uint64_t token,
                                         std::uint64_t want, std::span<const count_entry> counts) {
  absl::StatusOr<std::size_t> input = siu_input(from, "token");
  if (!input.ok()) return input.status();
  for (const count_entry& e : counts) {
    if (e.source != from || e.destination >= topo_.nodes()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "token from node %u carries a count for pair %u->%u", from, e.source, e.destination));
    }
  }
  return take_token(*input, token, want, counts, "node", from);
}

absl::Status token_manager::on_link_token(std::uint32_t from_switch, std::uint64_t token,
                                          std::uint64_t want, std::span<const count_entry> counts) {
  absl::StatusOr<std::size_t> input = link_input(from_switch, "token");
  if (!input.ok()) return input.status();
  for (const count_entry& e : counts) {
    if (e.source >= topo_.nodes() || e.destination >= topo_.nodes()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("token from switch %u carries a count for pair %u->%u", from_switch,
                          e.source, e.destination));
    }
  }
  return take_token(*input, token, want, counts, "switch", from_switch);
}

absl::Status token_manager::take_token(std::size_t input, std::uint64_t token, std::uint64_t want,
                                       std::span<const count_entry> counts, const char* who,
                                       std::uint32_t id) {
  port& p = ports_[input];
  if (p.parked || token <= p.last_token) {
    return absl::InvalidArgumentError(
        absl::StrFormat("switch %u expected a token after %u from %s %u, got %u%s", switch_,
                        p.last_token, who, id, token, p.parked ? " while it is parked" : ""));
  }
  p.last_token = token;
  for (const count_entry& e : counts) take_count(input, e);
  return take_want(input, want);
}

void token_manager::take_count(std::size_t input, const count_entry& entry) {
  const std::uint64_t pair = std::uint64_t{entry.source} * topo_.nodes() + entry.destination;
  pair_count& count = counts_[pair];
  if (entry.count <= count.count) return;
  count.count = entry.count;
  // Forward only towards the destination: to its SIU if it is attached here, else to the
  // adjacent switch on the path to it.
  const std::uint32_t target_switch = topo_.switch_of(entry.destination);
  const std::uint32_t output = target_switch == switch_
                                   ? siu_port_[entry.destination]
                                   : link_port_[topo_.next_switch(switch_, target_switch)];
  ISO_CHECK(output != kNoPort) << "switch " << switch_ << " has no way to node "
                               << entry.destination;
  if (output == input) return;  // cannot happen in a tree; never echo a count back
  port& to = ports_[output];
  if (!serves(to)) return;  // another copy forwards it
  if (!count.dirty) {
    count.dirty = true;
    to.dirty.push_back(pair);
  }
}

absl::Status token_manager::take_want(std::size_t input, std::uint64_t want) {
  if (want <= want_) return absl::OkStatus();
  want_ = want;
  for (std::size_t i = 0; i < ports_.size(); ++i) {
    if (i == input) continue;
    const port& p = ports_[i];
    if (p.parked || !serves(p)) continue;
    if (is_local_siu(p)) {
      local_siu_->on_demand(want);
      continue;
    }
    const packet_header header{
        .type = packet_type::demand,
        .to_switch = p.is_link ? static_cast<std::uint16_t>(p.peer_switch) : kToSiu,
        .a = switch_,
        .stamp = want};
    const comm::byte_span piece = std::as_bytes(std::span(&header, 1));
    if (absl::Status s = out_.send(p.node, std::span(&piece, 1)); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::size_t> token_manager::siu_input(comm::node_id from, const char* what) const {
  if (from >= siu_port_.size() || siu_port_[from] == kNoPort) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s from node %u, which is not attached to switch %u", what, from, switch_));
  }
  return siu_port_[from];
}

absl::StatusOr<std::size_t> token_manager::link_input(std::uint32_t from_switch,
                                                      const char* what) const {
  if (from_switch >= link_port_.size() || link_port_[from_switch] == kNoPort) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s from switch %u, which is not adjacent to switch %u", what, from_switch, switch_));
  }
  return link_port_[from_switch];
}

absl::Status token_manager::on_siu_demand(comm::node_id from, std::uint64_t want) {
  absl::StatusOr<std::size_t> input = siu_input(from, "demand");
  if (!input.ok()) return input.status();
  return take_want(*input, want);
}

absl::Status token_manager::on_park(comm::node_id from, std::uint64_t last_token,
                                    std::span<const count_entry> counts) {
  absl::StatusOr<std::size_t> input = siu_input(from, "park");
  if (!input.ok()) return input.status();
  port& p = ports_[*input];
  // A token number above the last one is allowed: an SIU of a replicated TM resumes from the
  // highest answer any copy gave, which may be above this copy's.
  if (p.parked || last_token < p.last_token) {
    return absl::InvalidArgumentError(
        absl::StrFormat("node %u parks at token %u; switch %u has its token %u%s", from, last_token,
                        switch_, p.last_token, p.parked ? " and it is already parked" : ""));
  }
  // Every count is checked before any is taken: a refused park leaves no trace.
  for (const count_entry& e : counts) {
    if (e.source != from || e.destination >= topo_.nodes()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "park from node %u carries a count for pair %u->%u", from, e.source, e.destination));
    }
  }
  for (const count_entry& e : counts) take_count(*input, e);
  p.parked = true;
  p.last_token = last_token;
  return absl::OkStatus();
}

absl::Status token_manager::on_unpark(comm::node_id from) {
  absl::StatusOr<std::size_t> input = siu_input(from, "unpark");
  if (!input.ok()) return input.status();
  port& p = ports_[*input];
  if (!p.parked) {
    return absl::InvalidArgumentError(
        absl::StrFormat("node %u unparks but is not parked at switch %u", from, switch_));
  }
  // Tokens up to pulse_ went out without waiting for it; it resumes after them, so every
  // SIU still knows that this node's pulse is at least (TM token) - K.
  p.parked = false;
  p.last_token = std::max(p.last_token, pulse_);
  if (is_local_siu(p)) {
    local_siu_->on_unparked(p.last_token);
    return absl::OkStatus();
  }
  const packet_header header{.type = packet_type::unparked, .a = switch_, .stamp = p.last_token};
  const comm::byte_span piece = std::as_bytes(std::span(&header, 1));
  return out_.send(p.node, std::span(&piece, 1));
}

absl::Status token_manager::on_link_demand(std::uint32_t from_switch, std::uint64_t want) {
  absl::StatusOr<std::size_t> input = link_input(from_switch, "demand");
  if (!input.ok()) return input.status();
  return take_want(*input, want);
}

absl::Status token_manager::send_token(port& to, std::uint64_t token) {
  std::vector<count_entry>& entries = scratch_entries_;
  entries.clear();
  for (std::uint64_t pair : to.dirty) {
    pair_count& count = counts_[pair];
    count.dirty = false;
    entries.push_back({.source = static_cast<std::uint32_t>(pair / topo_.nodes()),
                       .destination = static_cast<std::uint32_t>(pair % topo_.nodes()),
                       .count = count.count});
  }
  to.dirty.clear();
  ISO_LOG(nicfw.tm, debug, "token manager of switch %u sends token %u to %s %u with %u counts",
          switch_, token, to.is_link ? "switch" : "node", to.is_link ? to.peer_switch : to.node,
          entries.size());
  if (is_local_siu(to)) {
    local_siu_->on_tm_token(token, want_, entries);
    return absl::OkStatus();
  }
  const packet_header header{
      .type = to.is_link ? packet_type::link_token : packet_type::tm_token,
      .to_switch = to.is_link ? static_cast<std::uint16_t>(to.peer_switch) : kToSiu,
      .a = switch_,
      .stamp = token};
  const token_body body{.want = want_, .entries = static_cast<std::uint32_t>(entries.size())};
  const comm::byte_span pieces[3] = {std::as_bytes(std::span(&header, 1)),
                                     std::as_bytes(std::span(&body, 1)),
                                     std::as_bytes(std::span(entries))};
  return out_.send(to.node, pieces);
}

absl::Status token_manager::advance(bool& did_work) {
  // Token q stands for every token up to q (it says "pulses before q may close" and carries
  // cumulative counts), so a burst of tokens goes out as its last one.
  std::uint64_t target = want_;  // nobody needs more: time stands still
  for (const port& p : ports_) {
    if (!p.parked) target = std::min(target, p.last_token + tokens_per_loop_);
  }
  if (target <= pulse_) return absl::OkStatus();
  for (port& p : ports_) {
    if (!serves(p)) continue;
    if (absl::Status s = send_token(p, target); !s.ok()) return s;
  }
  pulse_ = target;
  did_work = true;
  return absl::OkStatus();
}

}  // namespace iso::nicfw
