#include "nicfw/multicast_service.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"

namespace iso::nicfw {
namespace {

constexpr auto kData = kMulticastDataPacket;
constexpr auto kCredit = kMulticastCreditPacket;
constexpr auto kNumberRequest = service_packet(kMulticastNumbers, 2);
constexpr auto kNumber = service_packet(kMulticastNumbers, 3);
constexpr auto kProgress = service_packet(kMulticastNumbers, 4);

constexpr packet_binding kPackets[] = {
    // Fragmented: a message may exceed a transport packet. The unicast classes' freed
    // credits ride along, as on any data packet.
    {.type = kData, .name = "multicast", .carries_credits = true, .fragmented = true},
    {.type = kCredit, .name = "multicast_credit"},
    {.type = kNumberRequest, .name = "sequence_request"},
    {.type = kNumber, .name = "sequence_number"},
    {.type = kProgress, .name = "sequence_progress"},
};
constexpr submission_kind kSubmissions[] = {kMulticastSubmission};

std::size_t members_offset() { return sizeof(multicast_prefix); }

// The lane a multicast travels in: its sequenced group's, or its origin's.
std::uint64_t lane_id(const multicast_prefix& p) {
  return (p.flags & kMulticastSequenced) != 0 ? kMulticastGroupLane + p.group : p.root;
}
// "origin 3" or "group 7", for messages.
std::string lane_name(std::uint64_t id) {
  return id >= kMulticastGroupLane ? absl::StrFormat("group %u", id - kMulticastGroupLane)
                                   : absl::StrFormat("origin %u", id);
}
std::size_t payload_offset(const multicast_prefix& p) {
  return sizeof(multicast_prefix) + std::size_t{p.members} * sizeof(comm::node_id);
}

}  // namespace

const service_binding multicast_service::kBinding{
    .packets = kPackets, .submissions = kSubmissions, .polled = true};

struct multicast_service::message {
  std::vector<std::byte> body;  // prefix, members, payload
  multicast_prefix prefix;
  comm::node_id parent = 0;
  bool own = false;
  std::uint32_t pending = 0;  // children to send to, and the local step

  [[nodiscard]] std::span<const comm::node_id> members() const {
    return {reinterpret_cast<const comm::node_id*>(body.data() + members_offset()), prefix.members};
  }
  [[nodiscard]] comm::byte_span payload() const {
    return comm::byte_span(body).subspan(payload_offset(prefix));
  }
  void set_sequence(std::uint64_t n) {
    prefix.sequence = n;
    std::memcpy(body.data(), &prefix, sizeof(prefix));
  }
};

multicast_service::multicast_service(nic_context& nic, multicast_options options)
    : nic_(nic), options_(options), peers_(nic.topo().nodes()) {}

std::uint32_t multicast_service::lane_window(std::uint64_t id) const {
  return id >= kMulticastGroupLane ? options_.sequencer_window : options_.window;
}

multicast_service::lane& multicast_service::lane_to(comm::node_id to, std::uint64_t id) {
  auto [it, added] = peers_[to].lanes.try_emplace(id);
  if (added) {
    it->second.credits = lane_window(id);
    live_lanes_.store(live_lanes_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  return it->second;
}

void multicast_service::release_if_idle(comm::node_id to, std::uint64_t id) {
  auto it = peers_[to].lanes.find(id);
  if (it == peers_[to].lanes.end()) return;
  const lane& l = it->second;
  if (l.credits != lane_window(id) || !l.blocked.empty() || l.held != 0) return;
  peers_[to].lanes.erase(it);
  live_lanes_.store(live_lanes_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
}

namespace {

// The prefix and members of a body; InvalidArgument naming `what` when they do not fit, are
// not sorted and distinct, name a node outside the job, or leave out the root or the
// sequencer.
absl::StatusOr<multicast_prefix> read_prefix(comm::byte_span body, std::uint32_t nodes,
                                             const char* what) {
  multicast_prefix p;
  if (!read_at(body, 0, p)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s of %u bytes is shorter than its prefix", what, body.size()));
  }
  if (p.members == 0 || body.size() < payload_offset(p)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s of %u bytes cannot hold its %u members", what, body.size(), p.members));
  }
  if (static_cast<std::uint8_t>(p.shape) > static_cast<std::uint8_t>(tree_shape::binomial)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s names tree shape %u", what, static_cast<unsigned>(p.shape)));
  }
  bool has_root = false;
  bool has_sequencer = false;
  comm::node_id last = 0;
  for (std::uint32_t i = 0; i < p.members; ++i) {
    comm::node_id m = 0;
    (void)read_at(body, members_offset() + i * sizeof(m), m);
    if (m >= nodes || (i > 0 && m <= last)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: member %u is node %u, not a node of the job (0..%u) in increasing order", what, i, m,
          nodes - 1));
    }
    has_root |= m == p.root;
    has_sequencer |= m == p.sequencer;
    last = m;
  }
  if (!has_root || ((p.flags & kMulticastSequenced) != 0 && !has_sequencer)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: its sender %u or sequencer %u is not a member", what, p.root, p.sequencer));
  }
  return p;
}

}  // namespace

absl::Status multicast_service::on_submission(const submission& s, bool& taken) {
  const comm::byte_span bytes = s.parts[0].operations;
  if (own_live_ >= options_.window) {
    taken = false;  // the host did not keep to host_may_submit()
    return absl::OkStatus();
  }
  taken = true;
  absl::StatusOr<multicast_prefix> prefix =
      read_prefix(bytes, nic_.topo().nodes(), "multicast submission");
  if (!prefix.ok()) return absl::InternalError(prefix.status().message());
  if (prefix->root != nic_.self()) {
    return absl::InternalError(absl::StrFormat("multicast submission from node %u names sender %u",
                                               nic_.self(), prefix->root));
  }
  auto m = std::make_shared<message>();
  m->body.assign(bytes.begin(), bytes.end());
  m->prefix = *prefix;
  m->parent = nic_.self();
  m->own = true;
  ++own_live_;
  const std::size_t live = live_messages_.load(std::memory_order_relaxed) + 1;
  live_messages_.store(live, std::memory_order_relaxed);
  if (live > peak_live_messages_.load(std::memory_order_relaxed)) {
    peak_live_messages_.store(live, std::memory_order_relaxed);
  }
  if ((prefix->flags & kMulticastSequenced) == 0) {
    m->set_sequence(sent_index_[prefix->group]++);
    return spread(m);
  }
  numberings_[prefix->group].messages.push_back(m);
  if (prefix->sequencer == nic_.self()) {
    return on_request(nic_.self(), comm::byte_span(m->body).subspan(0, payload_offset(m->prefix)));
  }
  // The request carries the prefix and the members: the sequencer learns the group from
  // its first request.
  return nic_
      .send(prefix->sequencer, {.type = kNumberRequest, .a = prefix->group},
            comm::byte_span(m->body).subspan(0, payload_offset(m->prefix)))
      .status();
}

const tree_place* multicast_service::place_of(const message& m) {
  // Bounded: a job that keeps making groups must not keep every tree it ever used. But room
  // for every root of two groups of the whole job, so that one busy group never thrashes.
  const std::size_t most_places = 256 + 2 * std::size_t{nic_.topo().nodes()};
  const std::span<const comm::node_id> members = m.members();
  const tree_key key{.group = m.prefix.group, .root = m.prefix.root, .shape = m.prefix.shape};
  auto it = places_.find(key);
  if (it != places_.end() && std::equal(members.begin(), members.end(), it->second.members.begin(),
                                        it->second.members.end())) {
    return it->second.place ? &*it->second.place : nullptr;
  }
  if (it == places_.end() && places_.size() >= most_places) places_.clear();
  known_place& known = places_[key];
  known.members.assign(members.begin(), members.end());
  known.place = place_in_tree(key.shape, members, key.root, nic_.self());
  return known.place ? &*known.place : nullptr;
}

absl::Status multicast_service::spread(const message_ptr& m) {
  const tree_place* place = place_of(*m);
  if (place == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("multicast of group %u from node %u reached node %u, which is not a member",
                        m->prefix.group, m->prefix.root, nic_.self()));
  }
  if (!m->own && place->parent != m->parent) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "multicast of group %u from node %u came from node %u, not from its tree parent",
        m->prefix.group, m->prefix.root, m->parent));
  }
  // `place` stays valid: sending only queues packets, and taking in does not look up trees.
  m->pending = static_cast<std::uint32_t>(place->children.size()) + 1;
  for (comm::node_id child : place->children) {
    if (absl::Status s = send_to(child, m); !s.ok()) return s;
  }
  return take_in(m);
}

absl::Status multicast_service::send_to(comm::node_id child, const message_ptr& m) {
  lane& l = lane_to(child, lane_id(m->prefix));
  if (l.credits == 0 || !l.blocked.empty()) {
    l.blocked.push_back(m);
    return absl::OkStatus();
  }
  --l.credits;
  if (absl::Status s = nic_.send(child, {.type = kData}, m->body).status(); !s.ok()) return s;
  step_done(m);
  return absl::OkStatus();
}

// `l` is a lane to `to`; sending may add a lane, but only to a message's parent, which is
// never the child `to` it is sent to (spread checks the tree), so `l` stays where it is.
absl::Status multicast_service::flush_blocked(comm::node_id to, lane& l) {
  while (l.credits > 0 && !l.blocked.empty()) {
    message_ptr m = std::move(l.blocked.front());
    l.blocked.pop_front();
    --l.credits;
    if (absl::Status s = nic_.send(to, {.type = kData}, m->body).status(); !s.ok()) return s;
    step_done(m);
  }
  return absl::OkStatus();
}

absl::Status multicast_service::take_in(const message_ptr& m) {
  if ((m->prefix.flags & kMulticastSequenced) == 0) {
    deliver(m);
    return absl::OkStatus();
  }
  hold_back& h = hold_backs_[m->prefix.group];
  h.sequencer = m->prefix.sequencer;
  const auto take = [&](const message_ptr& next) {
    ++h.next;
    if ((next->prefix.flags & kMulticastNull) != 0) {
      step_done(next);
    } else {
      deliver(next);
    }
  };
  if (m->prefix.sequence == h.next && h.waiting.empty()) {
    take(m);  // in order, as nearly always: the hold-back queue is not needed
  } else if (m->prefix.sequence < h.next || !h.waiting.emplace(m->prefix.sequence, m).second) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "sequenced multicast of group %u from node %u has number %u, which came before",
        m->prefix.group, m->prefix.root, m->prefix.sequence));
  }
  while (!h.waiting.empty() && h.waiting.begin()->first == h.next) {
    message_ptr next = std::move(h.waiting.begin()->second);
    h.waiting.erase(h.waiting.begin());
    take(next);
  }
  if (h.next != h.reported && !h.listed) {
    h.listed = true;
    progressed_.push_back(m->prefix.group);
  }
  return absl::OkStatus();
}

void multicast_service::deliver(const message_ptr& m) {
  nic_.deliver({.kind = kMulticastDelivery,
                .source = m->prefix.root,
                .sequence = m->prefix.group,
                .stamp = m->prefix.sequence,
                .payload = m->payload()});
  at_host_.push_back(m);
}

void multicast_service::step_done(const message_ptr& m) {
  if (--m->pending != 0) return;
  live_messages_.store(live_messages_.load(std::memory_order_relaxed) - 1,
                       std::memory_order_relaxed);
  if (m->own) {
    --own_live_;
    finished_.store(finished_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    return;
  }
  const std::uint64_t id = lane_id(m->prefix);
  lane& l = lane_to(m->parent, id);
  if (l.owed++ == 0) owing_.push_back({.peer = m->parent, .lane = id});
}

absl::Status multicast_service::on_packet(comm::node_id source, const packet_header& header,
                                          comm::byte_span body) {
  if (source == nic_.self()) {
    return absl::InvalidArgumentError("multicast packet from this node to itself");
  }
  if (header.type == kData) return on_data(source, body);
  if (header.type == kCredit) return on_credit(source, header);
  if (header.type == kNumberRequest) return on_request(source, body);
  if (header.type == kNumber) return on_number(header.a, header.stamp);
  return on_progress(source, header.a, header.stamp);
}

// A credit packet's stamp names its lane (lane_id()). Only credits that are out may come
// back: a credit for a lane in which this node has none out to `from` (one it never sent in,
// or not to that node, which is then no child of its in that lane's trees) or more than are
// out is refused before it touches the lane.
absl::Status multicast_service::on_credit(comm::node_id from, const packet_header& header) {
  const std::uint64_t id = header.stamp;
  if (id >= peers_.size() && (id < kMulticastGroupLane || id - kMulticastGroupLane > UINT32_MAX)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "multicast credits from node %u name lane %u, neither an origin node nor a group", from,
        id));
  }
  auto it = peers_[from].lanes.find(id);
  const std::uint32_t limit = lane_window(id);
  const std::uint32_t out = it == peers_[from].lanes.end() ? 0 : limit - it->second.credits;
  if (out == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "multicast credits from node %u for %s, in which node %u holds no message this node sent "
        "it (no credits out)",
        from, lane_name(id), from));
  }
  if (header.a == 0 || header.a > out) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "multicast credits from node %u for %s: %u returned, but %u are out (window %u)", from,
        lane_name(id), header.a, out, limit));
  }
  lane& l = it->second;
  l.credits += header.a;
  if (absl::Status s = flush_blocked(from, l); !s.ok()) return s;
  release_if_idle(from, id);
  return absl::OkStatus();
}

absl::Status multicast_service::on_data(comm::node_id source, comm::byte_span body) {
  absl::StatusOr<multicast_prefix> prefix =
      read_prefix(body, nic_.topo().nodes(), "multicast packet");
  if (!prefix.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("from node %u: %s", source, prefix.status().message()));
  }
  // A peer sends only while it has credits: one more is a broken or hostile peer, refused
  // before it is held (its lane stays as it was).
  const std::uint64_t id = lane_id(*prefix);
  lane& in = lane_to(source, id);
  if (in.held == lane_window(id)) {
    release_if_idle(source, id);
    return absl::InvalidArgumentError(
        absl::StrFormat("multicast from node %u in %s beyond its window of %u (no credits out)",
                        source, lane_name(id), lane_window(id)));
  }
  ++in.held;
  auto m = std::make_shared<message>();
  m->body.assign(body.begin(), body.end());
  m->prefix = *prefix;
  m->parent = source;
  const std::size_t live = live_messages_.load(std::memory_order_relaxed) + 1;
  live_messages_.store(live, std::memory_order_relaxed);
  if (live > peak_live_messages_.load(std::memory_order_relaxed)) {
    peak_live_messages_.store(live, std::memory_order_relaxed);
  }
  return spread(m);
}

absl::Status multicast_service::on_request(comm::node_id from, comm::byte_span body) {
  absl::StatusOr<multicast_prefix> prefix =
      read_prefix(body, nic_.topo().nodes(), "sequence number request");
  if (!prefix.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("from node %u: %s", from, prefix.status().message()));
  }
  if (prefix->sequencer != nic_.self() || prefix->root != from) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "sequence number request from node %u for group %u names sender %u and sequencer %u", from,
        prefix->group, prefix->root, prefix->sequencer));
  }
  counter& c = counters_[prefix->group];
  if (c.members.empty()) {
    c.members.resize(prefix->members);
    std::memcpy(c.members.data(), body.data() + members_offset(),
                c.members.size() * sizeof(comm::node_id));
    c.delivered.assign(c.members.size(), 0);
  } else if (c.members.size() != prefix->members ||
             std::memcmp(c.members.data(), body.data() + members_offset(),
                         c.members.size() * sizeof(comm::node_id)) != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("sequence number request from node %u names other members for group %u",
                        from, prefix->group));
  }
  c.deferred.push_back(from);
  return grant(prefix->group, c);
}

absl::Status multicast_service::grant(std::uint32_t group, counter& c) {
  const std::uint64_t slowest = *std::min_element(c.delivered.begin(), c.delivered.end());
  while (!c.deferred.empty() && c.next < slowest + options_.sequencer_window) {
    const comm::node_id to = c.deferred.front();
    c.deferred.pop_front();
    if (absl::Status s = answer(to, group, c.next++); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status multicast_service::answer(comm::node_id to, std::uint32_t group,
                                       std::uint64_t number) {
  if (to == nic_.self()) return on_number(group, number);
  return nic_.send(to, {.type = kNumber, .a = group, .stamp = number}, {}).status();
}

absl::Status multicast_service::on_number(std::uint32_t group, std::uint64_t number) {
  auto it = numberings_.find(group);
  if (it == numberings_.end() || it->second.waiting() == 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("sequence number %u of group %u answers no request of node %u", number,
                        group, nic_.self()));
  }
  numbering& n = it->second;
  message_ptr m = std::move(n.messages[n.first++]);
  if (n.waiting() == 0) {
    numberings_.erase(it);  // groups used once leave nothing
  } else if (n.first >= 32 && 2 * n.first >= n.messages.size()) {
    // A group that never runs dry (a stream of writes) must not keep its taken slots.
    n.messages.erase(n.messages.begin(), n.messages.begin() + static_cast<std::ptrdiff_t>(n.first));
    n.first = 0;
  }
  m->set_sequence(number);
  return spread(m);
}

absl::Status multicast_service::on_progress(comm::node_id from, std::uint32_t group,
                                            std::uint64_t delivered) {
  auto it = counters_.find(group);
  if (it == counters_.end()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "progress report from node %u for group %u, whose counter node %u does not hold", from,
        group, nic_.self()));
  }
  counter& c = it->second;
  const auto member = std::lower_bound(c.members.begin(), c.members.end(), from);
  if (member == c.members.end() || *member != from || delivered > c.next) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "progress report from node %u for group %u: %u delivered, of %u numbers handed out", from,
        group, delivered, c.next));
  }
  std::uint64_t& mine = c.delivered[static_cast<std::size_t>(member - c.members.begin())];
  mine = std::max(mine, delivered);
  return grant(group, c);
}

absl::Status multicast_service::report_progress(bool& did_work) {
  // A report to this node's own counter may hand out numbers, whose messages may list
  // groups again: walk a copy.
  progress_scratch_.swap(progressed_);
  for (std::uint32_t group : progress_scratch_) {
    hold_back& h = hold_backs_[group];
    h.listed = false;
    if (h.next == h.reported) continue;
    h.reported = h.next;
    did_work = true;
    if (h.sequencer == nic_.self()) {
      if (absl::Status s = on_progress(nic_.self(), group, h.reported); !s.ok()) return s;
      continue;
    }
    if (absl::Status s =
            nic_.send(h.sequencer, {.type = kProgress, .a = group, .stamp = h.next}, {}).status();
        !s.ok()) {
      return s;
    }
  }
  progress_scratch_.clear();
  return absl::OkStatus();
}

std::string multicast_service::describe() const {
  std::string out =
      absl::StrFormat("own %u, at host %u, consumed %u of %u;", own_live_, at_host_.size(),
                      consumed_seen_, consumed_.load(std::memory_order_relaxed));
  for (comm::node_id i = 0; i < peers_.size(); ++i) {
    for (const auto& [id, l] : peers_[i].lanes) {
      out += absl::StrFormat(" peer %u %s: credits %u blocked %u held %u owed %u;", i,
                             lane_name(id), l.credits, l.blocked.size(), l.held, l.owed);
    }
  }
  for (const auto& [g, h] : hold_backs_) {
    out += absl::StrFormat(
        " group %u: next %u waiting %u (first %d) reported %u;", g, h.next, h.waiting.size(),
        h.waiting.empty() ? -1 : static_cast<int>(h.waiting.begin()->first), h.reported);
  }
  for (const auto& [g, c] : counters_) {
    out +=
        absl::StrFormat(" counter %u: next %u deferred %u delivered", g, c.next, c.deferred.size());
    for (std::uint64_t d : c.delivered) out += absl::StrFormat(" %u", d);
    out += ";";
  }
  for (const auto& [g, w] : numberings_) {
    out += absl::StrFormat(" numbering %u: %u waiting;", g, w.waiting());
  }
  return out;
}

absl::Status multicast_service::poll(bool& did_work) {
  const std::uint64_t consumed = consumed_.load(std::memory_order_acquire);
  // A round of a node that uses no ordered group (most rounds of most jobs) ends here.
  if (consumed == consumed_seen_ && owing_.empty() && progressed_.empty()) {
    return absl::OkStatus();
  }
  if (consumed - consumed_seen_ > at_host_.size()) {
    return absl::InternalError(
        absl::StrFormat("the host consumed %u multicast deliveries, %u more than it was given",
                        consumed - consumed_seen_, consumed - consumed_seen_ - at_host_.size()));
  }
  while (consumed_seen_ != consumed) {
    ++consumed_seen_;
    message_ptr m = std::move(at_host_.front());
    at_host_.pop_front();
    step_done(m);
    did_work = true;
  }
  for (const owed_lane& o : owing_) {
    lane& l = lane_to(o.peer, o.lane);
    const std::uint32_t owed = std::exchange(l.owed, 0);
    l.held -= owed;
    if (absl::Status s =
            nic_.send(o.peer, {.type = kCredit, .a = owed, .stamp = o.lane}, {}).status();
        !s.ok()) {
      return s;
    }
    release_if_idle(o.peer, o.lane);
    did_work = true;
  }
  owing_.clear();
  return report_progress(did_work);
}

}  // namespace iso::nicfw
