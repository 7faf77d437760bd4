// What the object runtime sends: requests to a single copy's owner and their replies
// (direct packets, tag direct_tag::objects), and replicated writes (messages of the job's
// objects order). Fixed headers followed by the argument or result bytes; every node runs
// the same build, so the headers travel as they are laid out in memory.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "runtime/progress/direct_tags.hpp"

namespace iso::runtime::objects_wire {

// request: a call, to the owner as the caller knows it; reply: its answer; moved: the
// receiver no longer keeps the copy (the caller asks again where the reply says); transfer:
// a migrating copy (state and waiting calls) to its new owner; accepted: the owner (or a
// node the copy is on its way to) keeps the call, which waits there (a reply_header).
enum class packet_kind : std::uint8_t {
  request = 1,
  reply = 2,
  moved = 3,
  transfer = 4,
  accepted = 5
};

// A call of an operation of a single copy, to its owner.
struct request_header {
  direct_tag tag = direct_tag::objects;
  packet_kind kind = packet_kind::request;
  std::uint8_t reserved[2] = {};
  std::uint32_t op = 0;
  std::uint64_t object = 0;
  std::uint64_t call = 0;   // the caller's number for the call
  std::uint64_t epoch = 0;  // migrations of the object the caller knows of
};

// The owner's answer: `code` is an absl::StatusCode (0: the bytes are the result, else the
// error's message).
// moved: `owner` and `epoch` say where the copy went, as the sender knows it.
struct reply_header {
  direct_tag tag = direct_tag::objects;
  packet_kind kind = packet_kind::reply;
  std::uint8_t code = 0;
  // reply (automatic placement): kOfferCopy when the owner offers the copy, kOfferReplicas
  // when it asks the caller to replicate the object.
  std::uint8_t offer = 0;
  std::uint32_t owner = 0;  // moved: kReplicatedOwner when the object is replicated now
  std::uint64_t call = 0;
  std::uint64_t epoch = 0;
};

// A copy that migrates: the state's saved bytes, then `waiting` calls, each a
// transfer_call and its argument bytes.
struct transfer_header {
  direct_tag tag = direct_tag::objects;
  packet_kind kind = packet_kind::transfer;
  std::uint8_t replica = 0;  // 1: a replica for a node, the object became replicated
  std::uint8_t reserved = 0;
  std::uint32_t waiting = 0;
  std::uint64_t object = 0;
  std::uint64_t epoch = 0;  // the migrations the sender had applied
  std::uint64_t writes = 0;
  std::uint64_t state_bytes = 0;
};
struct transfer_call {
  std::uint32_t op = 0;
  std::uint32_t caller = 0;
  std::uint64_t call = 0;
  std::uint32_t args_bytes = 0;
  std::uint32_t logged = 0;
};

// A write of a replicated object in the objects order; the sender is the caller.
struct write_header {
  std::uint64_t object = 0;
  std::uint32_t op = 0;
  std::uint32_t reserved = 0;
  std::uint64_t call = 0;
};

// The body of a creation by one node (after its write_header, op kCreateOp): this header,
// the type's name, then the initial state's bytes.
struct create_header {
  std::uint8_t placement = 0;          // iso::object_placement
  std::uint8_t order = 0;              // the creator's objects order (order_kind)
  std::uint8_t starts_replicated = 0;  // automatic: the hint said reads dominate
  std::uint8_t reserved = 0;
  std::uint32_t owner = 0;
  std::uint32_t name_length = 0;
};

// Operation ids of the order's messages that are not operations.
inline constexpr std::uint32_t kCreateOp = 0xffffffffu;
inline constexpr std::uint32_t kMigrateOp = 0xfffffffeu;
// Automatic placement: a single copy becomes replicated; a node reports the reads it ran
// on its replica (a u64 count).
inline constexpr std::uint32_t kReplicateOp = 0xfffffffdu;
inline constexpr std::uint32_t kReadsOp = 0xfffffffcu;

inline constexpr std::uint8_t kOfferCopy = 1;
inline constexpr std::uint8_t kOfferReplicas = 2;
inline constexpr std::uint32_t kReplicatedOwner = 0xffffffffu;

static_assert(std::is_trivially_copyable_v<request_header>);
static_assert(std::is_trivially_copyable_v<reply_header>);
static_assert(std::is_trivially_copyable_v<write_header>);
static_assert(std::is_trivially_copyable_v<create_header>);
static_assert(std::is_trivially_copyable_v<transfer_header>);
static_assert(std::is_trivially_copyable_v<transfer_call>);

// Header then body, in one buffer.
template <typename Header>
std::vector<std::byte> frame(const Header& h, std::span<const std::byte> body) {
  const std::span<const std::byte> head = std::as_bytes(std::span(&h, 1));
  std::vector<std::byte> bytes;
  bytes.reserve(head.size() + body.size());
  bytes.insert(bytes.end(), head.begin(), head.end());
  bytes.insert(bytes.end(), body.begin(), body.end());
  return bytes;
}

// The header of `bytes`, or nothing when they are too short for one.
template <typename Header>
std::optional<Header> header_of(std::span<const std::byte> bytes) {
  if (bytes.size() < sizeof(Header)) return std::nullopt;
  Header h;
  std::memcpy(&h, bytes.data(), sizeof(Header));
  return h;
}

}  // namespace iso::runtime::objects_wire
