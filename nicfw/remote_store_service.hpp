// Remote store as a NIC service (the FCI model, OpenSHMEM's put/get/quiet): one-sided puts
// of bytes into another node's registered window and gets from it, outside logical time,
// completed by the NICs alone. The target's host takes no part: its NIC writes or reads the
// window's memory, which its host registered with it, and answers. A host may be computing
// or asleep while others put into and get from its windows.
//
// Submissions (the host's payloads are the structs below, followed by the bytes of a put):
//   kRegisterWindow  this node's memory for a window id; the NIC delivers kWindowRegistered
//                    once it serves the window (puts and gets for it may come from then on).
//   kPut             window_access + bytes, for the target node (this node too).
//   kGet             window_access, for the target; kGetResult delivers get_result + bytes.
//   kFence           a fence ticket; kFenceDone delivers it once every put this node
//                    submitted before it was applied at its target (acknowledged).
// A put or get the target refuses (a window it does not serve, bytes outside it) comes back
// as kRemoteStoreRefused with a refusal; hosts check bounds before they submit, so this is
// a protocol error, never the normal path.
//
// Order: puts and gets from one node to one target are applied in the order submitted (pairs
// are FIFO), so a get sees the earlier puts of its own node to that target without a fence.
// Puts, gets and their answers are exempt from flow control: the target's NIC applies a put
// at once, and the answers answer requests their receivers made.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

#include "nicfw/service.hpp"
#include "nicfw/service_numbers.hpp"

namespace iso::nicfw {

// Its numbers: nicfw/service_numbers.hpp.
inline constexpr auto kRegisterWindow = service_submission(kRemoteStoreNumbers, 0);
inline constexpr auto kPut = service_submission(kRemoteStoreNumbers, 1);
inline constexpr auto kGet = service_submission(kRemoteStoreNumbers, 2);
inline constexpr auto kFence = service_submission(kRemoteStoreNumbers, 3);

inline constexpr auto kWindowRegistered = service_delivery(kRemoteStoreNumbers, 0);
inline constexpr auto kGetResult = service_delivery(kRemoteStoreNumbers, 1);
inline constexpr auto kFenceDone = service_delivery(kRemoteStoreNumbers, 2);
inline constexpr auto kRemoteStoreRefused = service_delivery(kRemoteStoreNumbers, 3);

// kRegisterWindow's payload (and kWindowRegistered's).
struct window_registration {
  std::uint32_t window = 0;
  std::uint32_t reserved = 0;
  std::uint64_t base = 0;  // the memory's address in this process
  std::uint64_t bytes = 0;
};
static_assert(sizeof(window_registration) == 24);

// Which bytes of a window a put or get touches. A put's bytes follow it; `ticket` is the
// host's for a get, returned with the result.
struct window_access {
  std::uint32_t window = 0;
  std::uint32_t ticket = 0;
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
};
static_assert(sizeof(window_access) == 24);

// kGetResult's payload: the get's ticket and size, then its bytes.
struct get_result {
  std::uint32_t ticket = 0;
  std::uint32_t reserved = 0;
  std::uint64_t bytes = 0;
};
static_assert(sizeof(get_result) == 16);

// kFence's payload and kFenceDone's.
struct fence_ticket {
  std::uint64_t ticket = 0;
};

// kRemoteStoreRefused's payload: what the target refused, and why.
enum class refusal_reason : std::uint32_t { no_such_window = 1, out_of_bounds = 2 };
struct refusal {
  window_access access;
  std::uint32_t target = 0;
  refusal_reason reason = refusal_reason::no_such_window;
  std::uint64_t window_bytes = 0;  // out_of_bounds: the window's size at the target
  std::uint8_t get = 0;            // 1: a get; 0: a put
  std::uint8_t reserved[7] = {};
};
static_assert(sizeof(refusal) == 48);

class remote_store_service final : public nic_service {
 public:
  static const service_binding kBinding;

  explicit remote_store_service(nic_context& nic) : nic_(nic) {}

  [[nodiscard]] absl::Status on_packet(comm::node_id source, const packet_header& header,
                                       comm::byte_span body) override;
  [[nodiscard]] absl::Status on_submission(const submission& s, bool& taken) override;

  // Puts sent and not yet acknowledged (for tests).
  [[nodiscard]] std::uint64_t unacknowledged() const { return unacknowledged_; }

  // Called by the host (any thread of its process) where the job synchronises without this
  // NIC, at a barrier: arriving and again after passing. The NIC touches window memory only
  // between two steps of the same counter, so whatever the NIC wrote into a window before
  // the host's step happens before the host's accesses after it, and the host's accesses
  // before it happen before the NIC's later ones. The chain that makes a barrier order a
  // put runs through other processes (the ack to the origin, its fence, its arrival), and
  // nothing in that chain is an edge between this NIC and its host; this is.
  void synchronize_with_host() { window_sync_.fetch_add(1, std::memory_order_acq_rel); }

 private:
  // The window's memory, or why `access` does not fit it.
  [[nodiscard]] bool find(const window_access& access, std::span<std::byte>& memory,
                          refusal& why) const;
  // Applies a put from `source` (this node too) and answers it; `data` are its bytes.
  [[nodiscard]] absl::Status apply_put(comm::node_id source, const window_access& access,
                                       comm::byte_span data);
  // Serves a get from `source` (this node too).
  [[nodiscard]] absl::Status serve_get(comm::node_id source, const window_access& access);
  [[nodiscard]] absl::Status on_submission_body(const submission& s);
  // One put of this node was applied at its target (or refused there).
  void acknowledged();

  // Brackets the NIC's accesses to window memory (see synchronize_with_host).
  struct window_access_scope {
    explicit window_access_scope(std::atomic<std::uint64_t>& sync) : sync_(sync) {
      sync_.fetch_add(1, std::memory_order_acq_rel);
    }
    ~window_access_scope() { sync_.fetch_add(1, std::memory_order_acq_rel); }
    window_access_scope(const window_access_scope&) = delete;
    window_access_scope& operator=(const window_access_scope&) = delete;
    std::atomic<std::uint64_t>& sync_;
  };

  nic_context& nic_;
  std::atomic<std::uint64_t> window_sync_{0};
  std::vector<std::span<std::byte>> windows_;  // by window id; empty: not registered
  std::uint64_t unacknowledged_ = 0;
  std::vector<fence_ticket> fences_;  // waiting for unacknowledged_ to reach 0
  std::vector<std::byte> scratch_;    // a get result being built
};

}  // namespace iso::nicfw
