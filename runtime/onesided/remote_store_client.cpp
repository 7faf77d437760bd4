#include "runtime/onesided/remote_store_client.hpp"

#include <cstring>

#include "absl/strings/str_format.h"
#include "nicfw/remote_store_service.hpp"

namespace iso::runtime {
namespace {

template <typename T>
comm::byte_span bytes_of(const T& value) {
  return std::as_bytes(std::span(&value, 1));
}

std::string describe(const nicfw::refusal& r, comm::node_id from) {
  const char* op = r.get ? "get" : "put";
  if (r.reason == nicfw::refusal_reason::no_such_window) {
    return absl::StrFormat(
        "node %u refused a %s of %u bytes at offset %u of window %u: it has no "
        "such window",
        from, op, r.access.bytes, r.access.offset, r.access.window);
  }
  return absl::StrFormat(
      "node %u refused a %s of %u bytes at offset %u of window %u: its window has %u bytes", from,
      op, r.access.bytes, r.access.offset, r.access.window, r.window_bytes);
}

}  // namespace

remote_store_client::remote_store_client(event_loop& loop) : loop_(loop) {
  constexpr nicfw::delivery_kind kKinds[] = {nicfw::kWindowRegistered, nicfw::kGetResult,
                                             nicfw::kFenceDone, nicfw::kRemoteStoreRefused};
  loop.add_unit(*this, kKinds, /*ends_rounds=*/false);
}

absl::Status remote_store_client::register_window(std::uint32_t window,
                                                  std::span<std::byte> memory) {
  const nicfw::window_registration r{
      .window = window,
      .base = reinterpret_cast<std::uintptr_t>(memory.data()),  // NOLINT: handed to the NIC
      .bytes = memory.size()};
  const comm::byte_span piece = bytes_of(r);
  const std::uint64_t wanted = registered_ + 1;
  if (absl::Status s =
          loop_.submit(nicfw::kRegisterWindow, loop_.nic().self(), std::span(&piece, 1));
      !s.ok()) {
    return s;
  }
  return loop_.wait_for([&] { return registered_ >= wanted; });
}

absl::Status remote_store_client::put(comm::node_id target, std::uint32_t window,
                                      std::uint64_t offset, comm::byte_span bytes) {
  const nicfw::window_access access{.window = window, .offset = offset, .bytes = bytes.size()};
  const comm::byte_span pieces[2] = {bytes_of(access), bytes};
  if (absl::Status s = loop_.submit(nicfw::kPut, target, pieces); !s.ok()) return s;
  ++puts_since_fence_;
  // Inline, the NIC runs only when this thread polls: a stream of puts must let it.
  return loop_.progress_now_and_then(bytes.size());
}

absl::Status remote_store_client::get(comm::node_id target, std::uint32_t window,
                                      std::uint64_t offset, std::uint64_t bytes,
                                      std::uint32_t ticket) {
  const nicfw::window_access access{
      .window = window, .ticket = ticket, .offset = offset, .bytes = bytes};
  const comm::byte_span piece = bytes_of(access);
  return loop_.submit(nicfw::kGet, target, std::span(&piece, 1));
}

absl::Status remote_store_client::fence(absl::Duration timeout) {
  if (!loop_.failure().ok()) return loop_.failure();
  if (puts_since_fence_ == 0) return absl::OkStatus();
  const nicfw::fence_ticket f{.ticket = ++fences_issued_};
  const comm::byte_span piece = bytes_of(f);
  if (absl::Status s = loop_.submit(nicfw::kFence, loop_.nic().self(), std::span(&piece, 1));
      !s.ok()) {
    return s;
  }
  absl::StatusOr<bool> acknowledged =
      loop_.wait_until(absl::Now() + timeout, [&] { return fences_done_ >= f.ticket; });
  if (!acknowledged.ok()) return acknowledged.status();
  if (!*acknowledged) {
    return absl::DeadlineExceededError(absl::StrFormat(
        "fence() on node %u: earlier puts were not acknowledged by their targets within %s",
        loop_.nic().self(), absl::FormatDuration(timeout)));
  }
  puts_since_fence_ = 0;
  return absl::OkStatus();
}

void remote_store_client::on_delivery(const nicfw::delivery& d) {
  if (d.kind == nicfw::kGetResult) {
    nicfw::get_result head;
    if (!nicfw::read_at(d.payload, 0, head) || d.payload.size() != sizeof(head) + head.bytes ||
        !sink_) {
      loop_.fail(absl::InvalidArgumentError(absl::StrFormat(
          "malformed get result of %u bytes from node %u", d.payload.size(), d.source)));
      return;
    }
    sink_(head.ticket, d.payload.subspan(sizeof(head)));
    return;
  }
  if (d.kind == nicfw::kFenceDone) {
    nicfw::fence_ticket f;
    if (nicfw::read_at(d.payload, 0, f) && f.ticket > fences_done_) fences_done_ = f.ticket;
    return;
  }
  if (d.kind == nicfw::kWindowRegistered) {
    ++registered_;
    return;
  }
  nicfw::refusal r;
  if (d.payload.size() != sizeof(r) || !nicfw::read_at(d.payload, 0, r)) {
    loop_.fail(absl::InvalidArgumentError(absl::StrFormat(
        "malformed remote store refusal of %u bytes from node %u", d.payload.size(), d.source)));
    return;
  }
  loop_.fail(absl::FailedPreconditionError(describe(r, d.source)));
}

}  // namespace iso::runtime
