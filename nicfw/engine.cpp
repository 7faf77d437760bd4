#include "nicfw/engine.hpp"

#include <algorithm>
#include <iterator>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_format.h"
#include "base/check.hpp"
#include "base/log.hpp"
#include "nicfw/nic_thread.hpp"

namespace iso::nicfw {
namespace {

// Isochrons stamped per batch, before the batch's token goes out. A stream of isochrons
// (the whole host queue, when the host issues faster than the NIC sends) would otherwise be
// one batch: receivers could close nothing, and so free no credits, until its end. With a
// cap the stream's pulses close while it flows (mbm-bench's isotach stream, for one, runs
// faster).
constexpr std::size_t kIsochronsPerBatch = 256;

}  // namespace

engine::engine(comm::node_id self, std::shared_ptr<const topology> topo,
               std::unique_ptr<comm::transport> transport, const engine_options& options)
    : self_(self),
      topo_(std::move(topo)),
      transport_(std::move(transport)),
      options_(options),
      inline_(!options.own_thread),
      channel_(options.host_queue_bytes),
      out_(*transport_, options.paranoid),
      siu_(self, *topo_, out_),
      credits_(topo_->nodes(), self, options.credit_window),
      received_(topo_->nodes()),
      expected_sequence_(topo_->nodes(), 0) {
  ISO_CHECK(transport_->self() == self && transport_->size() == topo_->nodes())
      << "transport for node " << transport_->self() << " of " << transport_->size()
      << " does not fit node " << self << " of a topology of " << topo_->nodes();
  for (std::uint32_t s : topo_->tms_hosted_by(self)) {
    tms_.push_back(std::make_unique<token_manager>(s, self, *topo_, out_));
    if (s == topo_->switch_of(self)) {
      tms_.back()->attach_local_siu(siu_);
      siu_.attach_local_tm(*tms_.back());
    }
  }
  reassembly_.resize(topo_->nodes());
}

engine::~engine() {
  stop_.store(true);
  if (thread_.joinable()) {
    transport_->wake();
    thread_.join();
  }
}

void engine::start() {
  if (inline_ || thread_.joinable()) return;
  thread_ = std::thread([this] { thread_main(); });
}

void engine::thread_main() {
  base::set_log_node(static_cast<int>(self_));
  pin_nic_thread(options_.local_nodes, options_.local_index);
  absl::Time idle_since = absl::Now();
  while (!stop_.load(std::memory_order_relaxed)) {
    bool did_work = false;
    if (absl::Status s = poll_once(did_work); !s.ok()) {
      fail(s);
      return;
    }
    if (did_work) {
      idle_since = absl::InfiniteFuture();
      continue;
    }
    const absl::Time now = absl::Now();
    if (idle_since == absl::InfiniteFuture()) idle_since = now;
    if (now - idle_since < options_.spin) continue;
    // Parks an idle SIU (the next round sends what that lets TMs here send).
    if (absl::Status s = siu_.rest(did_work); !s.ok()) {
      fail(s);
      return;
    }
    if (did_work) continue;
    transport_->wait(absl::Milliseconds(100), [this] {
      return channel_.nic_has_submissions() || stop_.load(std::memory_order_relaxed) ||
             host_demand_.load(std::memory_order_relaxed) > siu_.want();
    });
    idle_since = absl::Now();
  }
  // Other nodes may need the last tokens to close pulses (to see this node fail, for one).
  bool sent = false;
  if (absl::Status s = siu_.send_owed_tokens(sent); !s.ok()) fail(s);
}

absl::Status engine::poll(bool& did_work) {
  ISO_DCHECK(inline_) << "poll() is for inline mode";
  if (failed_.load(std::memory_order_acquire)) return failure();
  if (absl::Status s = poll_once(did_work); !s.ok()) {
    fail(s);
    return s;
  }
  return absl::OkStatus();
}

void engine::wait(absl::Duration timeout) {
  ISO_DCHECK(inline_) << "wait() is for inline mode (a NIC thread owns its SIU)";
  bool parked = false;
  if (absl::Status s = siu_.rest(parked); !s.ok()) {
    fail(s);
    return;
  }
  if (parked) return;  // the park went out; the host polls again before it sleeps
  transport_->wait(timeout, [this] { return channel_.nic_has_submissions(); });
}

void engine::demand(std::uint64_t pulse) {
  std::uint64_t seen = host_demand_.load(std::memory_order_relaxed);
  while (seen < pulse && !host_demand_.compare_exchange_weak(seen, pulse)) {
  }
  wake();
}

void engine::wake() {
  if (!inline_) transport_->wake();
}

absl::Status engine::failure() const {
  // The host asks every round (thread mode): a healthy NIC answers without the lock.
  if (!failed_.load(std::memory_order_acquire)) return absl::OkStatus();
  absl::MutexLock lock(&failure_mu_);
  return failure_;
}

peer_counts engine::counts(comm::node_id peer) const {
  peer_counts c;
  for (int t = 1; t < kPacketTypes; ++t) {
    c.packets_sent[t] = out_.sent().get(peer, static_cast<packet_type>(t));
    c.packets_received[t] = received_.get(peer, static_cast<packet_type>(t));
  }
  c.backlog = out_.backlog_to(peer);
  return c;
}

nic_time engine::time() const {
  return {pulse_.load(std::memory_order_relaxed), closed_.load(std::memory_order_acquire)};
}

void engine::fail(const absl::Status& status) {
  absl::MutexLock lock(&failure_mu_);
  if (!failure_.ok()) return;
  failure_ = status;
  failed_.store(true, std::memory_order_release);
  ISO_LOG(nicfw, error, "nic of node %u stopped: %s", self_, std::string(status.message()));
  channel_.nic_ring_host();
}

absl::Status engine::poll_once(bool& did_work) {
  std::size_t flushed = 0;
  if (absl::Status s = out_.flush(flushed); !s.ok()) return s;
  did_work |= flushed != 0;
  if (!flush_deliveries()) did_work = true;

  if (absl::Status s = take_submissions(did_work); !s.ok()) return s;
  // Tokens the SIU held back last round (thread mode), unless an isochron took them along.
  if (absl::Status s = siu_.send_owed_tokens(did_work); !s.ok()) return s;

  absl::Status packet_status;
  std::size_t handled = 0;
  absl::Status polled = transport_->poll(
      [&](comm::received_packet& p) {
        if (packet_status.ok()) packet_status = handle_packet(p.source(), p.bytes());
      },
      handled, 256);
  if (!polled.ok()) return polled;
  if (!packet_status.ok()) return packet_status;
  did_work |= handled != 0;

  if (absl::Status s = service_credits(); !s.ok()) return s;
  siu_.on_host_demand(host_demand_.load(std::memory_order_relaxed));
  if (absl::Status s = run_loopback(did_work); !s.ok()) return s;
  release_closed_pulses();
  release_held_data();
  (void)flush_deliveries();  // what does not fit waits for the next poll
  if (delivered_since_ring_) {
    delivered_since_ring_ = false;
    did_work = true;
    // Inline, the host is the caller: nobody sleeps on the bell, and ringing it costs a
    // full fence.
    if (!inline_) channel_.nic_ring_host();
  }
  if (inline_) {
    // Inline, the next round comes only when the host calls into the runtime again, and
    // other nodes may need these tokens to close pulses before that (to see this node fail,
    // for one): they go now, after the pulses they close here are in the host queue.
    if (absl::Status s = siu_.send_owed_tokens(did_work); !s.ok()) return s;
  }
  did_work |= siu_.owes_tokens();  // the next round sends them: no sleeping before it
  pulse_.store(siu_.pulse(), std::memory_order_relaxed);
  // Published only when every delivery (EOPs included) is in the host queue, so a host that
  // sees closed >= p and then drains the queue has executed every pulse up to p.
  if (overflow_.empty()) closed_.store(siu_.closed(), std::memory_order_release);
  return absl::OkStatus();
}

absl::Status engine::take_submissions(bool& did_work) {
  // A backlog means the network pushes back: stop taking work, which bounds memory to what
  // the queues hold, and lets the host feel the back-pressure.
  submission& sub = scratch_submission_;
  std::vector<delivery>& markers = scratch_markers_;
  markers.clear();
  bool parked = false;
  std::size_t isochrons = 0;
  // Packets leave as they are sent; sleeping receivers are woken once the batch and its
  // token are out (a wake-up's fence would otherwise stall the batch right behind each
  // packet, between isotach data and the token that counts it, for one).
  transport_->defer_wakeups();
  absl::Cleanup wake = [this] { transport_->wake_deferred(); };
  while (isochrons < kIsochronsPerBatch && !out_.has_backlog() &&
         channel_.nic_peek_submission(sub)) {
    if (sub.kind == submission::kind_t::isochron && !siu_.may_stamp()) {
      // Parked: ask the TM first; the isochron waits in the queue until the answer.
      parked = true;
      break;
    }
    did_work = true;
    if (sub.kind == submission::kind_t::direct) {
      absl::StatusOr<std::uint32_t> sent = send_fragmented(
          sub.parts[0].destination, {.type = packet_type::direct}, sub.parts[0].operations);
      if (!sent.ok()) return sent.status();
    } else {
      const std::uint64_t stamp = siu_.stamp(sub.delta);
      for (const isochron_part& part : sub.parts) {
        ISO_CHECK(part.destination < topo_->nodes() && part.destination != self_)
            << "isochron part for node " << part.destination;
        absl::StatusOr<std::uint32_t> sent = send_fragmented(
            part.destination, {.type = packet_type::iso_data, .a = sub.sequence, .stamp = stamp},
            part.operations);
        if (!sent.ok()) return sent.status();
        // Every fragment is a packet the receiver must see before closing the pulse.
        for (std::uint32_t i = 0; i < *sent; ++i) siu_.count_sent(part.destination);
      }
      ++isochrons;
      // A run of isochrons stamped alike shares one marker: the host's cost per isochron
      // stays small when a stream of them is taken in one batch.
      if (!markers.empty() && markers.back().stamp == stamp &&
          markers.back().sequence + markers.back().count == sub.sequence) {
        ++markers.back().count;
      } else {
        markers.push_back(
            {.kind = delivery_kind::marker, .sequence = sub.sequence, .count = 1, .stamp = stamp});
      }
    }
    channel_.nic_finish_submission(sub);
  }
  if (!markers.empty()) {
    // The token that counts the new packets goes right behind them (one for the whole
    // batch), before anything else: every receiver needs it to close their pulse.
    if (absl::Status s = siu_.advance(did_work, siu::remote_tokens::now); !s.ok()) return s;
    if (absl::Status s = siu_.send_owed_tokens(did_work); !s.ok()) return s;
    for (const delivery& marker : markers) {
      deliver(marker);
      count_delivery(marker.stamp);
    }
  }
  return parked ? siu_.request_unpark() : absl::OkStatus();
}

absl::StatusOr<std::uint32_t> engine::send_fragmented(comm::node_id destination,
                                                      packet_header header,
                                                      comm::byte_span payload) {
  const std::size_t room =
      transport_->max_packet_size() - sizeof(packet_header) - sizeof(credit_info);
  std::uint32_t packets = 0;
  std::size_t at = 0;
  do {
    const std::size_t n = std::min(room, payload.size() - at);
    header.flags = at + n < payload.size() ? kMoreFragments : 0;
    const credit_info credits = credits_.nic_report(destination);
    const comm::byte_span pieces[3] = {std::as_bytes(std::span(&header, 1)),
                                       std::as_bytes(std::span(&credits, 1)),
                                       payload.subspan(at, n)};
    if (absl::Status s = out_.send(destination, pieces); !s.ok()) return s;
    at += n;
    ++packets;
  } while (at < payload.size());
  return packets;
}

bool engine::reassemble(comm::node_id source, const packet_header& header, comm::byte_span body,
                        comm::byte_span& whole) {
  std::vector<std::byte>& pending = reassembly_[source];
  if (header.flags & kMoreFragments) {
    pending.insert(pending.end(), body.begin(), body.end());
    return false;
  }
  if (pending.empty()) {
    whole = body;  // not fragmented: no copy
  } else {
    pending.insert(pending.end(), body.begin(), body.end());
    whole = pending;
  }
  return true;
}

absl::StatusOr<token_manager*> engine::tm_for(const packet_header& header, comm::node_id source,
                                              const char* what) {
  for (auto& tm : tms_) {
    if (tm->switch_index() == header.to_switch) return tm.get();
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("%s from node %u for switch %u, whose TM is not on node %u", what, source,
                      header.to_switch, self_));
}

absl::Status engine::run_loopback(bool& did_work) {
  // Bounded: each round either makes progress or ends, and tokens cannot multiply without
  // limit because every TM and SIU is lazy. The local SIU advances before the local TMs
  // decide: a TM that advanced first would send a token short of what this node's SIU was
  // about to allow, costing a whole extra token round for the pulse everyone waits on.
  for (int rounds = 0; rounds < 64; ++rounds) {
    bool progressed = false;
    auto drain = [&]() -> absl::Status {
      while (out_.has_loopback()) {
        out_.take_loopback(loopback_packet_);
        if (absl::Status s = handle_packet(self_, loopback_packet_); !s.ok()) return s;
        progressed = true;
      }
      return absl::OkStatus();
    };
    if (absl::Status s = drain(); !s.ok()) return s;
    if (absl::Status s = siu_.advance(progressed); !s.ok()) return s;
    if (absl::Status s = drain(); !s.ok()) return s;
    for (auto& tm : tms_) {
      if (absl::Status s = tm->advance(progressed); !s.ok()) return s;
    }
    if (!progressed) return absl::OkStatus();
    did_work = true;
  }
  return absl::OkStatus();
}

absl::Status engine::handle_packet(comm::node_id source, comm::byte_span bytes) {
  packet_header header;
  if (!read_at(bytes, 0, header)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "packet of %u bytes from node %u is shorter than a header", bytes.size(), source));
  }
  comm::byte_span body = bytes.subspan(sizeof(header));
  if (options_.paranoid) {
    if (absl::Status s = check_packet(source, header, body); !s.ok()) return s;
  }
  received_.add(source, header.type);
  switch (header.type) {
    case packet_type::iso_data: {
      if (source == self_) {
        return absl::InvalidArgumentError("isotach packet from this node to itself");
      }
      absl::StatusOr<comm::byte_span> payload = take_credits(source, header, body);
      if (!payload.ok()) return payload.status();
      body = *payload;
      if (absl::Status s = siu_.on_iso_data(source, header.stamp); !s.ok()) return s;
      comm::byte_span whole;
      if (!reassemble(source, header, body, whole)) return absl::OkStatus();
      deliver({.kind = delivery_kind::iso_data,
               .source = source,
               .sequence = header.a,
               .stamp = header.stamp,
               .payload = whole});
      reassembly_[source].clear();
      count_delivery(header.stamp);
      return absl::OkStatus();
    }
    case packet_type::direct: {
      absl::StatusOr<comm::byte_span> payload = take_credits(source, header, body);
      if (!payload.ok()) return payload.status();
      body = *payload;
      comm::byte_span whole;
      if (!reassemble(source, header, body, whole)) return absl::OkStatus();
      deliver({.kind = delivery_kind::direct, .source = source, .payload = whole});
      reassembly_[source].clear();
      return absl::OkStatus();
    }
    case packet_type::siu_token:
    case packet_type::tm_token:
    case packet_type::link_token:
    case packet_type::park:
      return handle_token(header, source, body);
    case packet_type::unpark: {
      absl::StatusOr<token_manager*> tm = tm_for(header, source, "unpark");
      if (!tm.ok()) return tm.status();
      return (*tm)->on_unpark(source);
    }
    case packet_type::unparked: {
      const std::uint32_t my_switch = topo_->switch_of(self_);
      const std::vector<std::uint32_t> tm_nodes = topo_->tm_nodes(my_switch);
      if (header.a != my_switch ||
          std::find(tm_nodes.begin(), tm_nodes.end(), source) == tm_nodes.end()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "unparked from node %u for switch %u, which is not this node's TM", source, header.a));
      }
      siu_.on_unparked(header.stamp);
      return absl::OkStatus();
    }
    case packet_type::credit: {
      absl::StatusOr<comm::byte_span> rest = take_credits(source, header, body);
      if (!rest.ok()) return rest.status();
      if (!rest->empty()) {
        return absl::InvalidArgumentError(
            absl::StrFormat("credit packet from node %u has %u bytes of body, not %u", source,
                            body.size(), sizeof(credit_info)));
      }
      return absl::OkStatus();
    }
    case packet_type::credit_request:
      credits_.nic_on_request(source);
      return absl::OkStatus();
    case packet_type::demand: {
      if (header.to_switch == kToSiu) {
        siu_.on_demand(header.stamp);
        return absl::OkStatus();
      }
      absl::StatusOr<token_manager*> tm = tm_for(header, source, "demand");
      if (!tm.ok()) return tm.status();
      return header.a == kNoSwitch ? (*tm)->on_siu_demand(source, header.stamp)
                                   : (*tm)->on_link_demand(header.a, header.stamp);
    }
  }
  return absl::InvalidArgumentError(absl::StrFormat("packet of unknown type %u from node %u",
                                                    static_cast<unsigned>(header.type), source));
}

absl::Status engine::check_packet(comm::node_id source, const packet_header& header,
                                  comm::byte_span body) {
  const char* type = packet_type_name(header.type);
  if (header.sequence != expected_sequence_[source]) {
    return absl::DataLossError(absl::StrFormat(
        "paranoid check: %s packet from node %u has sequence number %u, expected %u (packets "
        "from node %u were lost, duplicated or reordered)",
        type, source, header.sequence, expected_sequence_[source], source));
  }
  ++expected_sequence_[source];
  const std::uint32_t sum = checksum(std::span(&body, 1));
  if (sum != header.checksum) {
    return absl::DataLossError(absl::StrFormat(
        "paranoid check: %s packet %u from node %u is corrupt: its %u bytes after the header "
        "have CRC-32 %08x, the sender computed %08x",
        type, header.sequence, source, body.size(), sum, header.checksum));
  }
  return absl::OkStatus();
}

absl::StatusOr<comm::byte_span> engine::take_credits(comm::node_id source,
                                                     const packet_header& header,
                                                     comm::byte_span body) {
  credit_info info;
  if (!read_at(body, 0, info)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s packet from node %u is too short for its credits (%u bytes)",
                        packet_type_name(header.type), source, body.size()));
  }
  credits_.nic_grant(source, info);
  return body.subspan(sizeof(info));
}

absl::Status engine::service_credits() {
  // Freed bytes below the threshold wait for a data packet to ride on, or for a request
  // (which marks the ledger dirty again).
  if (!credits_.nic_take_dirty()) return absl::OkStatus();
  // What this host freed of its own packets needs no packet.
  credits_.nic_grant(self_, credits_.nic_report(self_));
  for (comm::node_id peer = 0; peer < topo_->nodes(); ++peer) {
    if (peer == self_) continue;
    if (credits_.nic_take_request_due(peer)) {
      const packet_header header{.type = packet_type::credit_request};
      const comm::byte_span piece = std::as_bytes(std::span(&header, 1));
      if (absl::Status s = out_.send(peer, std::span(&piece, 1)); !s.ok()) return s;
    }
    if (credits_.nic_credit_due(peer)) {
      const packet_header header{.type = packet_type::credit};
      const credit_info info = credits_.nic_report(peer);
      const comm::byte_span pieces[2] = {std::as_bytes(std::span(&header, 1)),
                                         std::as_bytes(std::span(&info, 1))};
      if (absl::Status s = out_.send(peer, pieces); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

absl::Status engine::handle_token(const packet_header& header, comm::node_id source,
                                  comm::byte_span body) {
  token_body tb;
  if (!read_at(body, 0, tb) ||
      body.size() != sizeof(tb) + std::size_t{tb.entries} * sizeof(count_entry)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "token from node %u has a malformed body of %u bytes", source, body.size()));
  }
  std::vector<count_entry>& counts = scratch_counts_;
  counts.resize(tb.entries);
  if (tb.entries != 0) {
    std::memcpy(counts.data(), body.data() + sizeof(tb), counts.size() * sizeof(count_entry));
  }
  if (header.type == packet_type::tm_token) {
    const std::uint32_t my_switch = topo_->switch_of(self_);
    if (header.a != my_switch || source != topo_->tm_serving(self_)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "TM token from node %u for switch %u; this node's TM is switch %u on node %u", source,
          header.a, my_switch, topo_->tm_serving(self_)));
    }
    for (const count_entry& e : counts) {
      if (e.destination != self_ || e.source >= topo_->nodes()) {
        return absl::InvalidArgumentError(
            absl::StrFormat("TM token from node %u counts pair %u->%u at node %u", source, e.source,
                            e.destination, self_));
      }
    }
    siu_.on_tm_token(header.stamp, tb.want, counts);
    return absl::OkStatus();
  }
  absl::StatusOr<token_manager*> tm = tm_for(header, source, "token");
  if (!tm.ok()) return tm.status();
  if (header.type == packet_type::siu_token) {
    return (*tm)->on_siu_token(source, header.stamp, tb.want, counts);
  }
  if (header.type == packet_type::park) return (*tm)->on_park(source, header.stamp, counts);
  return (*tm)->on_link_token(header.a, header.stamp, tb.want, counts);
}

void engine::deliver(const delivery& d) {
  if (d.kind == delivery_kind::eop && channel_.nic_holds() && held_stamp_ == d.stamp) {
    channel_.nic_close_held(d.count);
    release_held_data();
    return;
  }
  release_held_data();
  if (d.kind == delivery_kind::iso_data && overflow_.empty() && channel_.nic_deliver_held(d)) {
    held_stamp_ = d.stamp;
    delivered_since_ring_ = true;
    return;
  }
  queue_for_host(d);
}

void engine::release_held_data() { channel_.nic_publish_held(); }

void engine::queue_for_host(const delivery& d) {
  delivered_since_ring_ = true;
  if (overflow_.empty() && channel_.nic_deliver(d)) return;
  pending_delivery p{d, {d.payload.begin(), d.payload.end()}};
  overflow_.push_back(std::move(p));
  overflow_.back().item.payload = overflow_.back().payload;
  overflow_size_.store(overflow_.size(), std::memory_order_relaxed);
}

bool engine::flush_deliveries() {
  while (!overflow_.empty()) {
    if (!channel_.nic_deliver(overflow_.front().item)) return false;
    overflow_.pop_front();
    overflow_size_.store(overflow_.size(), std::memory_order_relaxed);
    delivered_since_ring_ = true;
  }
  return true;
}

void engine::count_delivery(std::uint64_t pulse) {
  // Pulses are few and mostly arrive in order: search from the back.
  auto it = delivered_per_pulse_.end();
  while (it != delivered_per_pulse_.begin() && std::prev(it)->first >= pulse) --it;
  if (it != delivered_per_pulse_.end() && it->first == pulse) {
    ++it->second;
  } else {
    delivered_per_pulse_.insert(it, {pulse, 1});
  }
}

void engine::release_closed_pulses() {
  const std::uint64_t closed = siu_.closed();
  auto it = delivered_per_pulse_.begin();
  for (; it != delivered_per_pulse_.end() && it->first <= closed; ++it) {
    deliver({.kind = delivery_kind::eop, .count = it->second, .stamp = it->first});
  }
  delivered_per_pulse_.erase(delivered_per_pulse_.begin(), it);
}

}  // namespace iso::nicfw
