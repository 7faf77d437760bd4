#include "nicfw/host_channel.hpp"

#include <cstddef>
#include <cstring>
#include <utility>

#include "base/check.hpp"

namespace iso::nicfw {
namespace {

struct submit_header {
  std::uint8_t kind;
  std::uint8_t reserved0 = 0;
  std::uint16_t reserved1 = 0;
  std::uint32_t sequence_or_destination;
  std::uint32_t delta;
  std::uint32_t parts;
};
static_assert(sizeof(submit_header) == 16);

struct part_header {
  std::uint32_t destination;
  std::uint32_t bytes;
};
static_assert(sizeof(part_header) == 8);

struct delivery_header {
  std::uint8_t kind;
  std::uint8_t reserved0 = 0;
  std::uint16_t reserved1 = 0;
  std::uint32_t source;
  std::uint64_t stamp;
  std::uint32_t count;
  std::uint32_t sequence;
};
static_assert(sizeof(delivery_header) == 24);

constexpr std::byte kZeros[8] = {};

constexpr std::size_t pad8(std::size_t n) { return (8 - (n & 7)) & 7; }

}  // namespace

namespace {
// Built here, by the thread that builds the NIC (the host's), before a NIC thread starts.
comm::resident_memory queue_memory(std::size_t bytes) {
  absl::StatusOr<comm::resident_memory> memory = comm::resident_memory::allocate(bytes);
  ISO_CHECK(memory.ok()) << "cannot allocate a NIC queue: " << memory.status().message();
  return *std::move(memory);
}
}  // namespace

host_channel::host_channel(std::size_t queue_bytes)
    : queue_bytes_(queue_bytes),
      to_nic_memory_(queue_memory(comm::byte_ring_footprint(queue_bytes))),
      to_host_memory_(queue_memory(comm::byte_ring_footprint(queue_bytes))),
      to_nic_producer_(to_nic_memory_.data(), queue_bytes),
      to_nic_consumer_(to_nic_memory_.data(), queue_bytes),
      to_host_producer_(to_host_memory_.data(), queue_bytes),
      to_host_consumer_(to_host_memory_.data(), queue_bytes) {}

std::size_t host_channel::max_record() const { return comm::byte_ring_max_payload(queue_bytes_); }

bool host_channel::submission_fits(std::size_t bytes) const {
  return sizeof(submit_header) + bytes <= max_record();
}

bool host_channel::host_submit_isochron(std::uint32_t sequence, std::uint32_t delta,
                                        std::span<const isochron_part> parts) {
  const submit_header header{.kind = static_cast<std::uint8_t>(submission_kind::isochron),
                             .sequence_or_destination = sequence,
                             .delta = delta,
                             .parts = static_cast<std::uint32_t>(parts.size())};
  scratch_headers_.resize(parts.size() * sizeof(part_header));
  scratch_pieces_.clear();
  scratch_pieces_.push_back(std::as_bytes(std::span(&header, 1)));
  std::size_t total = sizeof(header);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const part_header ph{parts[i].destination,
                         static_cast<std::uint32_t>(parts[i].operations.size())};
    std::byte* slot = scratch_headers_.data() + i * sizeof(part_header);
    std::memcpy(slot, &ph, sizeof(ph));
    scratch_pieces_.push_back({slot, sizeof(ph)});
    scratch_pieces_.push_back(parts[i].operations);
    const std::size_t pad = pad8(parts[i].operations.size());
    scratch_pieces_.push_back({kZeros, pad});
    total += sizeof(ph) + parts[i].operations.size() + pad;
  }
  ISO_CHECK(total <= max_record()) << "isochron of " << total << " bytes exceeds the send queue";
  return to_nic_producer_.try_push(scratch_pieces_, total);
}

bool host_channel::host_submit(submission_kind kind, node_id destination,
                               std::span<const byte_span> pieces) {
  ISO_DCHECK(kind != submission_kind::isochron) << "isochrons go through host_submit_isochron";
  const submit_header header{.kind = static_cast<std::uint8_t>(kind),
                             .sequence_or_destination = destination,
                             .delta = 0,
                             .parts = 0};
  scratch_pieces_.clear();
  scratch_pieces_.push_back(std::as_bytes(std::span(&header, 1)));
  std::size_t total = sizeof(header);
  for (const byte_span& piece : pieces) {
    scratch_pieces_.push_back(piece);
    total += piece.size();
  }
  ISO_CHECK(submission_fits(total - sizeof(header))) << "submission of " << total << " bytes";
  return to_nic_producer_.try_push(scratch_pieces_, total);
}

bool host_channel::nic_peek_submission(submission& out) {
  comm::ring_record record;
  const auto result = to_nic_consumer_.peek(record);
  if (result == comm::ring_consumer::peek_result::empty) return false;
  ISO_CHECK(result == comm::ring_consumer::peek_result::record) << "corrupt host send queue";
  submit_header header;
  std::memcpy(&header, record.payload.data(), sizeof(header));
  out.end = record.end;
  out.parts.clear();
  out.kind = static_cast<submission_kind>(header.kind);
  if (out.kind != submission_kind::isochron) {
    out.parts.push_back({header.sequence_or_destination, record.payload.subspan(sizeof(header))});
    return true;
  }
  out.sequence = header.sequence_or_destination;
  out.delta = header.delta;
  std::size_t at = sizeof(header);
  for (std::uint32_t i = 0; i < header.parts; ++i) {
    part_header ph;
    std::memcpy(&ph, record.payload.data() + at, sizeof(ph));
    at += sizeof(ph);
    out.parts.push_back({ph.destination, record.payload.subspan(at, ph.bytes)});
    at += ph.bytes + pad8(ph.bytes);
  }
  return true;
}

void host_channel::nic_finish_submission(const submission& s) {
  to_nic_consumer_.advance({0, s.end, {}});
  to_nic_consumer_.release_to(s.end);
}

bool host_channel::nic_deliver(const delivery& d) { return push_delivery(d, false); }

bool host_channel::nic_deliver_held(const delivery& d) { return push_delivery(d, true); }

void host_channel::nic_close_held(std::uint32_t count) {
  std::byte* header = to_host_producer_.held_payload();
  ISO_CHECK(header != nullptr) << "no delivery is held";
  const auto kind = static_cast<std::uint8_t>(delivery_kind::closing_data);
  std::memcpy(header + offsetof(delivery_header, kind), &kind, sizeof(kind));
  std::memcpy(header + offsetof(delivery_header, count), &count, sizeof(count));
}

bool host_channel::push_delivery(const delivery& d, bool hold) {
  const delivery_header header{.kind = static_cast<std::uint8_t>(d.kind),
                               .source = d.source,
                               .stamp = d.stamp,
                               .count = d.count,
                               .sequence = d.sequence};
  const byte_span pieces[2] = {std::as_bytes(std::span(&header, 1)), d.payload};
  const std::size_t size = sizeof(header) + d.payload.size();
  return hold ? to_host_producer_.try_push_held(pieces, size)
              : to_host_producer_.try_push(pieces, size);
}

std::size_t host_channel::host_poll(absl::FunctionRef<void(const delivery&)> upcall) {
  std::size_t handled = 0;
  comm::ring_record record;
  for (;;) {
    const auto result = to_host_consumer_.peek(record);
    if (result == comm::ring_consumer::peek_result::empty) break;
    ISO_CHECK(result == comm::ring_consumer::peek_result::record) << "corrupt host receive queue";
    delivery_header header;
    std::memcpy(&header, record.payload.data(), sizeof(header));
    delivery d{.kind = static_cast<delivery_kind>(header.kind)};
    d.stamp = header.stamp;
    d.count = header.count;
    d.sequence = header.sequence;
    d.source = header.source;
    d.payload = record.payload.subspan(sizeof(header));
    d.record = record.end;
    to_host_consumer_.advance(record);
    hold_current_ = false;
    upcall(d);
    held_.handled(to_host_consumer_, record.end, hold_current_);
    ++handled;
  }
  return handled;
}

void host_channel::host_release(std::uint64_t record) {
  ISO_CHECK(held_.release(to_host_consumer_, record)) << "release of a record that is not held";
}

bool host_channel::host_has_deliveries() const { return to_host_consumer_.has_pending(); }

void host_channel::host_wait(absl::Duration timeout, absl::FunctionRef<bool()> may_sleep) {
  const std::uint32_t ticket = host_bell_.prepare_sleep();
  // seq_cst: what may_sleep() loads must not be read before the sleep was announced.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!host_has_deliveries() && may_sleep()) host_bell_.sleep(ticket, timeout);
  host_bell_.finish_sleep();
}

}  // namespace iso::nicfw
