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

enum class packet_kind : std::uint8_t { request = 1, reply = 2 };

// A call of an operation of a single copy, to its owner.
struct request_header {
  direct_tag tag = direct_tag::objects;
  packet_kind kind = packet_kind::request;
  std::uint8_t reserved[2] = {};
  std::uint32_t op = 0;
  std::uint64_t object = 0;
  std::uint64_t call = 0;  // the caller's number for the call
};

// The owner's answer: `code` is an absl::StatusCode (0: the bytes are the result, else the
// error's message).
struct reply_header {
  direct_tag tag = direct_tag::objects;
  packet_kind kind = packet_kind::reply;
  std::uint8_t code = 0;
  std::uint8_t reserved[5] = {};
  std::uint64_t call = 0;
};

// A write of a replicated object in the objects order; the sender is the caller.
struct write_header {
  std::uint64_t object = 0;
  std::uint32_t op = 0;
  std::uint32_t reserved = 0;
  std::uint64_t call = 0;
};

static_assert(std::is_trivially_copyable_v<request_header>);
static_assert(std::is_trivially_copyable_v<reply_header>);
static_assert(std::is_trivially_copyable_v<write_header>);

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
