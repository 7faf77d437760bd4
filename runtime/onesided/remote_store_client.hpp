// The host's side of the NIC's remote store (nicfw/remote_store_service.hpp): registers
// this node's windows with its NIC, submits puts and gets, and waits for fences. Bounds are
// the caller's to check (node_state does, with the errors the public API promises); a
// refusal from a target is a protocol error and fails the node.
//
//   remote_store_client store(loop);
//   ISO_RETURN_IF_ERROR(store.register_window(0, memory));
//   ISO_RETURN_IF_ERROR(store.put(/*target=*/1, /*window=*/0, /*offset=*/64, bytes));
//   ISO_RETURN_IF_ERROR(store.fence(absl::Seconds(60)));  // the put is visible at node 1
//
// One thread uses it (the node's application thread).
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "runtime/progress/event_loop.hpp"

namespace iso::runtime {

class remote_store_client final : public delivery_unit {
 public:
  // Registers with `loop`, whose NIC must run remote_store_service.
  explicit remote_store_client(event_loop& loop);

  // Has the NIC serve `memory` as window `window` of this node; returns once it does, so
  // that puts and gets from other nodes can come from then on.
  [[nodiscard]] absl::Status register_window(std::uint32_t window, std::span<std::byte> memory);
  // Puts `bytes` at `offset` of `target`'s window `window`; the bytes are copied into the
  // NIC's queue, so they may be reused at once.
  [[nodiscard]] absl::Status put(comm::node_id target, std::uint32_t window, std::uint64_t offset,
                                 comm::byte_span bytes);
  // Gets `bytes` bytes at `offset` of `target`'s window; they go to the sink with `ticket`.
  [[nodiscard]] absl::Status get(comm::node_id target, std::uint32_t window, std::uint64_t offset,
                                 std::uint64_t bytes, std::uint32_t ticket);
  void set_get_sink(std::function<void(std::uint32_t ticket, comm::byte_span bytes)> sink) {
    sink_ = std::move(sink);
  }
  // Until every put submitted before was applied at its target. DeadlineExceeded after
  // `timeout`; the node's or the job's failure.
  [[nodiscard]] absl::Status fence(absl::Duration timeout);

  void on_delivery(const nicfw::delivery& d) override;

 private:
  event_loop& loop_;
  std::function<void(std::uint32_t, comm::byte_span)> sink_;
  std::uint64_t fences_issued_ = 0;
  std::uint64_t fences_done_ = 0;
  std::uint64_t registered_ = 0;  // registrations the NIC confirmed
  std::uint64_t puts_since_fence_ = 0;
};

}  // namespace iso::runtime
