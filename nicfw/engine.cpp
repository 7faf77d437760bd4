#include "nicfw/engine.hpp"

#include <algorithm>
#include <iterator>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_format.h"
#include "base/atomic_max.hpp"
#include "base/check.hpp"
#include "base/log.hpp"
#include "nicfw/credit_service.hpp"
#include "nicfw/isotach_time_service.hpp"
#include "nicfw/nic_thread.hpp"
#include "nicfw/unicast_service.hpp"

namespace iso::nicfw {

engine::engine(comm::node_id self, std::shared_ptr<const topology> topo,
               std::unique_ptr<comm::transport> transport, const engine_options& options)
    : self_(self),
      topo_(std::move(topo)),
      transport_(std::move(transport)),
      options_(options),
      inline_(!options.own_thread),
      channel_(options.host_queue_bytes),
      out_(*transport_, options.paranoid),
      credits_(topo_->nodes(), self, options.credit_window),
      received_(topo_->nodes()),
      expected_sequence_(topo_->nodes(), 0) {
  ISO_CHECK(transport_->self() == self && transport_->size() == topo_->nodes())
      << "transport for node " << transport_->self() << " of " << transport_->size()
      << " does not fit node " << self << " of a topology of " << topo_->nodes();
  reassembly_.resize(topo_->nodes());
  // Polled in this order each round: credits due go out before the SIU and TMs advance.
  add_service(std::make_unique<credit_service>(context(), credits_), credit_service::kBinding);
  add_service(std::make_unique<unicast_service>(context()), unicast_service::kBinding);
  auto time = std::make_unique<isotach_time_service>(context(), out_);
  time_ = time.get();
  add_service(std::move(time), isotach_time_service::kBinding);
}

void engine::add_service(std::unique_ptr<nic_service> service, const service_binding& binding) {
  ISO_CHECK(!thread_.joinable()) << "NIC service added after the NIC started";
  for (const packet_binding& p : binding.packets) {
    const auto type = static_cast<std::size_t>(p.type);
    ISO_CHECK(type != 0 && type < bindings_.size()) << "packet type " << type << " of " << p.name;
    ISO_CHECK(bindings_[type].service == nullptr)
        << "packet type " << type << " (" << p.name << ") is already "
        << bindings_[type].packet->name;
    bindings_[type] = {service.get(), &p};
  }
  for (submission_kind k : binding.submissions) {
    const auto kind = static_cast<std::size_t>(k);
    ISO_CHECK(submitters_[kind] == nullptr) << "submission kind " << kind << " is taken";
    submitters_[kind] = service.get();
  }
  if (binding.polled) polled_.push_back(service.get());
  services_.push_back(std::move(service));
}

const char* engine::type_name(packet_type t) const {
  const type_binding& b = binding_of(t);
  return b.packet != nullptr ? b.packet->name : "unknown";
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
    if (absl::Status s = time_->rest(did_work); !s.ok()) {
      fail(s);
      return;
    }
    if (did_work) continue;
    transport_->wait(absl::Milliseconds(100), [this] {
      return channel_.nic_has_submissions() || stop_.load(std::memory_order_relaxed) ||
             host_demand_.load(std::memory_order_relaxed) > time_->want();
    });
    idle_since = absl::Now();
  }
  // Other nodes may need the last tokens to close pulses (to see this node fail, for one).
  bool sent = false;
  if (absl::Status s = time_->send_owed_tokens(sent); !s.ok()) fail(s);
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

absl::Status engine::send_submitted() {
  ISO_DCHECK(inline_) << "send_submitted() is for inline mode";
  if (failed_.load(std::memory_order_acquire)) return failure();
  bool did_work = false;
  std::size_t flushed = 0;
  absl::Status s = out_.flush(flushed);  // a backlog keeps submissions in the queue
  if (s.ok()) s = take_submissions(did_work);
  // Inline, nobody else sends the tokens this owes before the host's next call (poll_once).
  if (s.ok()) s = time_->send_owed_tokens(did_work);
  if (!s.ok()) fail(s);
  return s;
}

absl::StatusOr<bool> engine::send_at_once(submission_kind kind, comm::node_id to,
                                          std::span<const comm::byte_span> pieces) {
  ISO_DCHECK(inline_) << "send_at_once() is for inline mode";
  if (failed_.load(std::memory_order_acquire)) return failure();
  if (kind == submission_kind::isochron || channel_.nic_has_submissions() || out_.has_backlog()) {
    return false;
  }
  nic_service* service = &submitter_of(kind);
  std::size_t total = 0;
  for (const comm::byte_span& piece : pieces) total += piece.size();
  // What the queue would hold, as host_submit() requires.
  ISO_CHECK(channel_.submission_fits(total)) << "submission of " << total << " bytes";
  at_once_bytes_.clear();
  for (const comm::byte_span& piece : pieces) {
    at_once_bytes_.insert(at_once_bytes_.end(), piece.begin(), piece.end());
  }
  submission& sub = at_once_submission_;
  sub.kind = kind;
  sub.parts.clear();
  sub.parts.push_back({to, at_once_bytes_});
  bool taken = false;
  bool did_work = false;
  absl::Status s;
  {
    // As take_submissions(): a receiver asleep is woken once, after every fragment is out.
    transport_->defer_wakeups();
    absl::Cleanup wake = [this] { transport_->wake_deferred(); };
    s = service->on_submission(sub, taken);
    // The service took it or declined it: either way its round of submissions is over.
    if (s.ok()) s = service->after_submissions(did_work);
  }
  // As send_submitted(): nobody else sends the tokens this owes before the host's next call.
  if (s.ok() && taken) s = time_->send_owed_tokens(did_work);
  // A large message once must not keep its room for the rest of the job.
  constexpr std::size_t kKeptBytes = 64 * 1024;
  if (at_once_bytes_.capacity() > kKeptBytes) std::vector<std::byte>().swap(at_once_bytes_);
  if (!s.ok()) {
    fail(s);
    return s;
  }
  return taken;
}

bool engine::may_stamp() const { return time_ == nullptr || time_->may_stamp(); }

bool engine::unparking() const { return time_ != nullptr && time_->unparking(); }

void engine::wait(absl::Duration timeout) {
  ISO_DCHECK(inline_) << "wait() is for inline mode (a NIC thread owns its SIU)";
  bool parked = false;
  if (absl::Status s = time_->rest(parked); !s.ok()) {
    fail(s);
    return;
  }
  if (parked) return;  // the park went out; the host polls again before it sleeps
  transport_->wait(timeout, [this] { return channel_.nic_has_submissions(); });
}

void engine::doze(absl::Duration timeout) {
  ISO_DCHECK(inline_) << "doze() is for inline mode (a NIC thread sleeps by itself)";
  transport_->wait(timeout, [this] { return channel_.nic_has_submissions(); });
}

void engine::await_packet(absl::Duration timeout) {
  ISO_DCHECK(inline_) << "await_packet() is for inline mode (a NIC thread sleeps by itself)";
  transport_->wait(timeout);
}

void engine::demand(std::uint64_t pulse) {
  base::raise_to(host_demand_, pulse, std::memory_order_seq_cst);
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
  return {pulse_.load(std::memory_order_relaxed), closed_.load(std::memory_order_acquire),
          stamp_base_.load(std::memory_order_relaxed)};
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
  if (absl::Status s = time_->send_owed_tokens(did_work); !s.ok()) return s;

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

  time_->note_host_demand(host_demand_.load(std::memory_order_relaxed));
  for (nic_service* service : polled_) {
    if (absl::Status s = service->poll(did_work); !s.ok()) return s;
  }
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
    if (absl::Status s = time_->send_owed_tokens(did_work); !s.ok()) return s;
  }
  did_work |= time_->owes_tokens();  // the next round sends them: no sleeping before it
  pulse_.store(time_->pulse(), std::memory_order_relaxed);
  stamp_base_.store(time_->stamp_base(), std::memory_order_relaxed);
  // Published only when every delivery (EOPs included) is in the host queue, so a host that
  // sees closed >= p and then drains the queue has executed every pulse up to p.
  if (overflow_.empty()) {
    const std::uint64_t was = closed_.load(std::memory_order_relaxed);
    if (time_->closed() > was) {
      closed_.store(time_->closed(), std::memory_order_release);
      // Pulses that closed with no delivery leave a sleeping host asleep, unless it asked
      // for them itself (it may wait for them: sync_to) or someone waits for it to have run
      // them. The fence orders the store of closed_ before the loads below, as the host
      // orders its demand before its load of closed_ (Dekker): one of the two sees the
      // other's. Inline, the host is the caller and never asleep here.
      if (!inline_) {
        std::atomic_thread_fence(std::memory_order_seq_cst);
        const std::atomic<std::uint64_t>* wanted = wanted_.load(std::memory_order_acquire);
        if (host_demand_.load(std::memory_order_relaxed) > was ||
            (wanted != nullptr && wanted->load(std::memory_order_relaxed) > was)) {
          channel_.nic_ring_host();
        }
      }
    }
  }
  return absl::OkStatus();
}

nic_service& engine::submitter_of(submission_kind kind) const {
  nic_service* service = submitters_[static_cast<std::size_t>(kind)];
  ISO_CHECK(service != nullptr) << "host submission of kind " << static_cast<int>(kind)
                                << ", which no NIC service takes";
  return *service;
}

absl::Status engine::take_submissions(bool& did_work) {
  // Most rounds of a waiting node find nothing submitted: they skip the wake-up deferral
  // and its cleanup, and the services' after_submissions(), which only follow a submission.
  if (!channel_.nic_has_submissions()) return absl::OkStatus();
  // A backlog means the network pushes back: stop taking work, which bounds memory to what
  // the queues hold, and lets the host feel the back-pressure.
  submission& sub = scratch_submission_;
  submitted_to_.clear();
  // Packets leave as they are sent; sleeping receivers are woken once the batch and its
  // token are out (a wake-up's fence would otherwise stall the batch right behind each
  // packet, between isotach data and the token that counts it, for one).
  transport_->defer_wakeups();
  absl::Cleanup wake = [this] { transport_->wake_deferred(); };
  while (!out_.has_backlog() && channel_.nic_peek_submission(sub)) {
    nic_service* service = &submitter_of(sub.kind);
    if (std::find(submitted_to_.begin(), submitted_to_.end(), service) == submitted_to_.end()) {
      submitted_to_.push_back(service);
    }
    bool taken = false;
    if (absl::Status s = service->on_submission(sub, taken); !s.ok()) return s;
    if (!taken) break;
    did_work = true;
    channel_.nic_finish_submission(sub);
  }
  for (nic_service* service : submitted_to_) {
    if (absl::Status s = service->after_submissions(did_work); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::uint32_t> engine::send(comm::node_id destination, packet_header header,
                                           comm::byte_span payload) {
  const type_binding& b = binding_of(header.type);
  ISO_DCHECK(b.service != nullptr)
      << "send of unbound packet type " << static_cast<int>(header.type);
  if (b.packet->carries_credits || b.packet->fragmented) {
    return send_pieces(destination, header, payload, *b.packet);
  }
  const comm::byte_span pieces[2] = {std::as_bytes(std::span(&header, 1)), payload};
  if (absl::Status s = out_.send(destination, pieces); !s.ok()) return s;
  return 1;
}

absl::Status engine::handle_loopback(bool& progressed) {
  while (out_.has_loopback()) {
    out_.take_loopback(loopback_packet_);
    if (absl::Status s = handle_packet(self_, loopback_packet_); !s.ok()) return s;
    progressed = true;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::uint32_t> engine::send_pieces(comm::node_id destination, packet_header header,
                                                  comm::byte_span payload,
                                                  const packet_binding& binding) {
  const std::size_t credit_bytes = binding.carries_credits ? sizeof(credit_info) : 0;
  const std::size_t room = transport_->max_packet_size() - sizeof(packet_header) - credit_bytes;
  if (!binding.fragmented && payload.size() > room) {
    return absl::OutOfRangeError(absl::StrFormat(
        "%s packet of %u bytes for node %u: more than one transport packet holds (%u), and "
        "the type is not bound as fragmented",
        binding.name, payload.size(), destination, room));
  }
  std::uint32_t packets = 0;
  std::size_t at = 0;
  do {
    const std::size_t n = std::min(room, payload.size() - at);
    header.flags = at + n < payload.size() ? kMoreFragments : 0;
    const credit_info credits =
        binding.carries_credits ? credits_.nic_report(destination) : credit_info{};
    const comm::byte_span credit_piece = std::as_bytes(std::span(&credits, 1)).first(credit_bytes);
    const comm::byte_span pieces[3] = {std::as_bytes(std::span(&header, 1)), credit_piece,
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
  const type_binding& b = binding_of(header.type);
  if (b.service == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat("packet of unknown type %u from node %u",
                                                      static_cast<unsigned>(header.type), source));
  }
  if (b.packet->carries_credits) {
    absl::StatusOr<comm::byte_span> payload = take_credits(source, header, body);
    if (!payload.ok()) return payload.status();
    body = *payload;
  }
  if (!b.packet->fragmented) return b.service->on_packet(source, header, body);
  comm::byte_span whole;
  if (!reassemble(source, header, body, whole)) return b.service->on_fragment(source, header);
  absl::Status handled = b.service->on_packet(source, header, whole);
  reassembly_[source].clear();
  return handled;
}

absl::Status engine::check_packet(comm::node_id source, const packet_header& header,
                                  comm::byte_span body) {
  const char* type = type_name(header.type);
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
                        type_name(header.type), source, body.size()));
  }
  credits_.nic_grant(source, info);
  return body.subspan(sizeof(info));
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

}  // namespace iso::nicfw
