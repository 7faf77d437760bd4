#include "nicfw/remote_store_service.hpp"

#include <cstring>

#include "absl/strings/str_format.h"

namespace iso::nicfw {
namespace {

constexpr auto kPutPacket = service_packet(kRemoteStoreNumbers, 0);
constexpr auto kPutAck = service_packet(kRemoteStoreNumbers, 1);
constexpr auto kGetPacket = service_packet(kRemoteStoreNumbers, 2);
constexpr auto kGetReply = service_packet(kRemoteStoreNumbers, 3);
constexpr auto kRefused = service_packet(kRemoteStoreNumbers, 4);

// Puts and get replies may exceed a transport packet: fragmented. They also carry the
// sender's freed credits back, as any data packet may; nothing of this service consumes
// credits.
constexpr packet_binding kPackets[] = {
    {.type = kPutPacket, .name = "put", .carries_credits = true, .fragmented = true},
    {.type = kPutAck, .name = "put_ack"},
    {.type = kGetPacket, .name = "get"},
    {.type = kGetReply, .name = "get_reply", .carries_credits = true, .fragmented = true},
    {.type = kRefused, .name = "remote_store_refused"},
};
constexpr submission_kind kSubmissions[] = {kRegisterWindow, kPut, kGet, kFence};

template <typename T>
comm::byte_span bytes_of(const T& value) {
  return std::as_bytes(std::span(&value, 1));
}

}  // namespace

const service_binding remote_store_service::kBinding{.packets = kPackets,
                                                     .submissions = kSubmissions};

bool remote_store_service::find(const window_access& access, std::span<std::byte>& memory,
                                refusal& why) const {
  why.access = access;
  why.target = nic_.self();
  if (access.window >= windows_.size() || windows_[access.window].data() == nullptr) {
    why.reason = refusal_reason::no_such_window;
    return false;
  }
  memory = windows_[access.window];
  if (access.offset > memory.size() || access.bytes > memory.size() - access.offset) {
    why.reason = refusal_reason::out_of_bounds;
    why.window_bytes = memory.size();
    return false;
  }
  memory = memory.subspan(access.offset, access.bytes);
  return true;
}

absl::Status remote_store_service::apply_put(comm::node_id source, const window_access& access,
                                             comm::byte_span data) {
  std::span<std::byte> memory;
  refusal why;
  const bool fits = data.size() == access.bytes && find(access, memory, why);
  if (fits && !data.empty()) {
    const window_access_scope scope(window_sync_);
    std::memcpy(memory.data(), data.data(), data.size());
  }
  if (source == nic_.self()) {
    if (!fits)
      nic_.deliver({.kind = kRemoteStoreRefused, .source = source, .payload = bytes_of(why)});
    return absl::OkStatus();  // nothing to acknowledge: it was never counted
  }
  if (!fits) return nic_.send(source, {.type = kRefused}, bytes_of(why)).status();
  return nic_.send(source, {.type = kPutAck}, {}).status();
}

absl::Status remote_store_service::serve_get(comm::node_id source, const window_access& access) {
  std::span<std::byte> memory;
  refusal why;
  why.get = 1;
  if (!find(access, memory, why)) {
    if (source == nic_.self()) {
      nic_.deliver({.kind = kRemoteStoreRefused, .source = source, .payload = bytes_of(why)});
      return absl::OkStatus();
    }
    return nic_.send(source, {.type = kRefused}, bytes_of(why)).status();
  }
  const get_result head{.ticket = access.ticket, .bytes = access.bytes};
  scratch_.resize(sizeof(head) + memory.size());
  std::memcpy(scratch_.data(), &head, sizeof(head));
  if (!memory.empty()) {
    const window_access_scope scope(window_sync_);
    std::memcpy(scratch_.data() + sizeof(head), memory.data(), memory.size());
  }
  if (source == nic_.self()) {
    nic_.deliver({.kind = kGetResult, .source = source, .payload = scratch_});
    return absl::OkStatus();
  }
  return nic_.send(source, {.type = kGetReply}, scratch_).status();
}

void remote_store_service::acknowledged() {
  if (--unacknowledged_ != 0) return;
  for (const fence_ticket& f : fences_) {
    nic_.deliver({.kind = kFenceDone, .source = nic_.self(), .payload = bytes_of(f)});
  }
  fences_.clear();
}

absl::Status remote_store_service::on_submission(const submission& s, bool& taken) {
  taken = true;
  if (absl::Status st = on_submission_body(s); !st.ok()) {
    return absl::InternalError(absl::StrFormat("remote store submission of kind %u: %s",
                                               static_cast<unsigned>(s.kind), st.message()));
  }
  return absl::OkStatus();
}

absl::Status remote_store_service::on_submission_body(const submission& s) {
  const isochron_part& part = s.parts[0];
  const comm::byte_span payload = part.operations;
  if (s.kind == kFence) {
    fence_ticket f;
    if (!read_at(payload, 0, f)) return absl::InternalError("a short fence");
    if (unacknowledged_ == 0) {
      nic_.deliver({.kind = kFenceDone, .source = nic_.self(), .payload = bytes_of(f)});
    } else {
      fences_.push_back(f);
    }
    return absl::OkStatus();
  }
  if (s.kind == kRegisterWindow) {
    window_registration r;
    if (!read_at(payload, 0, r)) return absl::InternalError("a short registration");
    if (r.window >= windows_.size()) windows_.resize(r.window + 1);
    // The host's memory, in this process: the NIC is a part of it that runs apart.
    windows_[r.window] = {reinterpret_cast<std::byte*>(r.base), r.bytes};  // NOLINT
    nic_.deliver({.kind = kWindowRegistered, .source = nic_.self(), .payload = payload});
    return absl::OkStatus();
  }
  window_access access;
  if (!read_at(payload, 0, access)) return absl::InternalError("a short window access");
  if (part.destination >= nic_.topo().nodes()) {
    return absl::InternalError(absl::StrFormat("for node %u", part.destination));
  }
  if (s.kind == kGet) {
    if (part.destination == nic_.self()) return serve_get(nic_.self(), access);
    return nic_.send(part.destination, {.type = kGetPacket}, payload).status();
  }
  const comm::byte_span data = payload.subspan(sizeof(access));
  if (part.destination == nic_.self()) return apply_put(nic_.self(), access, data);
  ++unacknowledged_;
  return nic_.send(part.destination, {.type = kPutPacket}, payload).status();
}

absl::Status remote_store_service::on_packet(comm::node_id source, const packet_header& header,
                                             comm::byte_span body) {
  if (source == nic_.self()) {
    return absl::InvalidArgumentError("remote store packet from this node to itself");
  }
  auto malformed = [&](const char* what) {
    return absl::InvalidArgumentError(
        absl::StrFormat("remote store %s from node %u has a malformed body of %u bytes", what,
                        source, body.size()));
  };
  if (header.type == kPutPacket) {
    window_access access;
    if (!read_at(body, 0, access)) return malformed("put");
    return apply_put(source, access, body.subspan(sizeof(access)));
  }
  if (header.type == kGetPacket) {
    window_access access;
    if (body.size() != sizeof(access) || !read_at(body, 0, access)) return malformed("get");
    return serve_get(source, access);
  }
  if (header.type == kPutAck || header.type == kRefused) {
    refusal why;
    if (header.type == kRefused && (body.size() != sizeof(why) || !read_at(body, 0, why))) {
      return malformed("refusal");
    }
    if (header.type == kPutAck && !body.empty()) return malformed("put_ack");
    const bool put = header.type == kPutAck || why.get == 0;
    if (put && unacknowledged_ == 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "remote store answer from node %u for a put this node did not make", source));
    }
    if (header.type == kRefused) {
      nic_.deliver({.kind = kRemoteStoreRefused, .source = source, .payload = body});
    }
    if (put) acknowledged();
    return absl::OkStatus();
  }
  get_result head;
  if (!read_at(body, 0, head) || body.size() != sizeof(head) + head.bytes) {
    return malformed("get_reply");
  }
  nic_.deliver({.kind = kGetResult, .source = source, .payload = body});
  return absl::OkStatus();
}

}  // namespace iso::nicfw
