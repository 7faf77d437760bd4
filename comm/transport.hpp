// The transport between NICs: the narrow interface every backend (`inproc`, `shm`, later
// `ucx`) implements. Nodes are numbered 0..size()-1.
//
// Guarantees: delivery is reliable and FIFO for every ordered pair of nodes (including a
// node to itself); nothing is dropped or overwritten. When the path to a receiver is full,
// send() says so (`Unavailable`) and the caller decides what to do, typically poll and retry.
//
//   iso::comm::transport& t = ...;
//   std::array<iso::comm::byte_span, 2> pieces{header_bytes, payload_bytes};
//   if (absl::Status s = t.send(peer, pieces); absl::IsUnavailable(s)) { /* back-pressure */ }
//   t.poll([&](iso::comm::received_packet& p) { handle(p.source(), p.bytes()); });
//
// Thread safety: one thread sends and polls a given transport object at a time (it is the
// NIC's private port). wake() may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/time/time.h"

namespace iso::comm {

using node_id = std::uint32_t;
using byte_span = std::span<const std::byte>;

class transport;

// A packet kept past its upcall. Move-only; releasing it (explicitly or by destruction)
// returns its buffer space to the sender. It must not outlive the transport that made it.
class held_packet {
 public:
  held_packet() = default;
  held_packet(held_packet&& other) noexcept { *this = std::move(other); }
  held_packet& operator=(held_packet&& other) noexcept;
  held_packet(const held_packet&) = delete;
  held_packet& operator=(const held_packet&) = delete;
  ~held_packet() { release(); }

  [[nodiscard]] node_id source() const { return source_; }
  [[nodiscard]] byte_span bytes() const { return bytes_; }
  [[nodiscard]] bool empty() const { return owner_ == nullptr; }

  // Frees the buffer now. Idempotent.
  void release();

 private:
  friend class transport;
  friend class received_packet;
  held_packet(transport* owner, node_id source, byte_span bytes, std::uint64_t token)
      : owner_(owner), source_(source), bytes_(bytes), token_(token) {}

  transport* owner_ = nullptr;
  node_id source_ = 0;
  byte_span bytes_;
  std::uint64_t token_ = 0;
};

// A packet handed to a poll() upcall. Its bytes are valid until the upcall returns, unless
// the upcall calls hold(), which keeps them (without a copy) until the held_packet is
// released.
class received_packet {
 public:
  [[nodiscard]] node_id source() const { return source_; }
  [[nodiscard]] byte_span bytes() const { return bytes_; }
  [[nodiscard]] held_packet hold();
  [[nodiscard]] bool held() const { return held_; }

 private:
  friend class transport;
  received_packet(transport* owner, node_id source, byte_span bytes, std::uint64_t token)
      : owner_(owner), source_(source), bytes_(bytes), token_(token) {}

  transport* owner_;
  node_id source_;
  byte_span bytes_;
  std::uint64_t token_;
  bool held_ = false;
};

using packet_upcall = absl::FunctionRef<void(received_packet&)>;

// Counters a transport keeps about its own traffic (for status calls and tests).
struct transport_counters {
  std::uint64_t packets_sent = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t packets_received = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t sends_would_block = 0;
  // Packets send() accepted that the transport still holds or waits on the fabric for (a
  // ucx rendezvous send until the receiver fetched it); 0 for transports that copy a
  // packet out before send() returns. A sender that closes while this is not 0 needs its
  // peer to make progress meanwhile.
  std::uint64_t sends_in_flight = 0;
};

class transport {
 public:
  virtual ~transport() = default;

  [[nodiscard]] node_id self() const { return self_; }
  [[nodiscard]] std::uint32_t size() const { return size_; }

  // Largest packet (sum of the pieces) send() accepts.
  [[nodiscard]] virtual std::size_t max_packet_size() const = 0;

  // Sends one packet gathered from `pieces`, copying the bytes once. Returns:
  //   OK               the packet is on its way and the pieces may be reused;
  //   Unavailable      the path to `destination` is full: nothing was sent, retry later
  //                    (after polling, so that this node keeps draining its own inbound);
  //   InvalidArgument  `destination` is not a node of this job;
  //   OutOfRange       the packet is larger than max_packet_size().
  // Never blocks.
  [[nodiscard]] virtual absl::Status send(node_id destination,
                                          std::span<const byte_span> pieces) = 0;
  [[nodiscard]] absl::Status send(node_id destination, byte_span bytes) {
    return send(destination, std::span<const byte_span>(&bytes, 1));
  }

  // Between defer_wakeups() and wake_deferred(), packets still leave as they are sent,
  // but a receiver that sleeps is woken only at wake_deferred(), once per destination. A
  // wake-up costs the sender a full fence, which also waits for the packet's stores to
  // reach the receiver's cache line; a sender with more to send right away (a NIC's batch
  // of isochrons and the token behind it) pays that once at its end. Backends without
  // sleeping receivers ignore both.
  virtual void defer_wakeups() {}
  virtual void wake_deferred() {}

  // Hands up to `budget` waiting packets to `upcall`, in FIFO order per source. Returns how
  // many were handed up. Never blocks. Returns an error (DataLoss) only when a peer's buffer
  // is corrupt, which means the job can no longer be trusted.
  [[nodiscard]] virtual absl::Status poll(
      packet_upcall upcall, std::size_t& handled,
      std::size_t budget = std::numeric_limits<std::size_t>::max()) = 0;

  // Blocks until a packet may be waiting for this node, wake() is called, or `timeout`
  // passes. Returns at once if something is already waiting, or if `also_ready` (checked
  // after the sleep is announced, so a wake() racing with it is never lost) says so.
  // Spurious returns are allowed.
  virtual void wait(absl::Duration timeout, absl::FunctionRef<bool()> also_ready) = 0;
  void wait(absl::Duration timeout) {
    wait(timeout, [] { return false; });
  }

  // Makes a concurrent or later wait() of this node return. Any thread.
  virtual void wake() = 0;

  // Says whether this node waits with nothing to do (`idle`) or runs, for the other nodes
  // of its host to read in busy_neighbours(). The node's own thread only.
  virtual void announce_idle(bool idle) { (void)idle; }
  // How many other nodes of this host have not announced that they are idle (those not
  // started yet, or gone, count as busy), counted up to `enough` at most; nullopt where the
  // backend cannot tell.
  [[nodiscard]] virtual std::optional<std::uint32_t> busy_neighbours(std::uint32_t enough) const {
    (void)enough;
    return std::nullopt;
  }

  [[nodiscard]] virtual transport_counters counters() const = 0;

 protected:
  transport(node_id self, std::uint32_t size) : self_(self), size_(size) {}

  // Returns a held packet's buffer space; `token` is what the backend put in the packet.
  virtual void release_held(node_id source, std::uint64_t token) = 0;
  // For backends: build the packet objects they hand up.
  received_packet make_received(node_id source, byte_span bytes, std::uint64_t token) {
    return received_packet(this, source, bytes, token);
  }

 private:
  friend class held_packet;
  friend class received_packet;
  node_id self_;
  std::uint32_t size_;
};

}  // namespace iso::comm
