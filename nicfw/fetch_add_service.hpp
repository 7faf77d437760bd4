// Fetch-and-add counters as a NIC service: counters held in a NIC's memory and answered by
// that NIC, never by its host, which may be computing or asleep (LFC's fetch-and-add, used
// for GSB's sequence numbers; Bhoedjang, sections 2.9 and 3.2). A counter is named by the
// node whose NIC holds it and a 64-bit index there; every counter starts at 0 and wraps
// like an unsigned 64-bit integer. A request from the counter's own node is answered by
// its NIC without a packet. Counters may be placed in memory the host shares
// (place_counters): then hosts on the same host add to them directly, and this NIC adds
// atomically beside them.
//
// The host submits kFetchAddSubmission for the counter's node with a fetch_add_request as
// payload; its NIC delivers kFetchAddResult with a fetch_add_result: the value before the
// add. Requests from one node to one counter are applied in the order they were submitted
// (pairs are FIFO); requests from different nodes in the order they reach the counter.
//
// The answer is exempt from flow control, as read replies are: it answers a request its
// receiver made, so their number is bounded by the requests outstanding.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>

#include "absl/container/flat_hash_map.h"
#include "nicfw/service.hpp"
#include "nicfw/service_numbers.hpp"

namespace iso::nicfw {

inline constexpr auto kFetchAddSubmission = service_submission(kFetchAddNumbers, 0);
inline constexpr auto kFetchAddResult = service_delivery(kFetchAddNumbers, 0);

// The host's request (the submission's payload, and the request packet's body).
struct fetch_add_request {
  std::uint64_t counter = 0;
  std::uint64_t delta = 0;
  std::uint32_t ticket = 0;  // the host's, returned with the answer
  std::uint32_t tag = 0;     // the host's too (where the answer goes), returned with it
};
static_assert(sizeof(fetch_add_request) == 24);

// The answer (the reply packet's body, and the delivery's payload).
struct fetch_add_result {
  std::uint64_t counter = 0;
  std::uint64_t before = 0;  // the counter's value before the add
  std::uint32_t ticket = 0;
  std::uint32_t tag = 0;  // the request's
};
static_assert(sizeof(fetch_add_result) == 24);

class fetch_add_service final : public nic_service {
 public:
  static const service_binding kBinding;

  explicit fetch_add_service(nic_context& nic) : nic_(nic) {}

  [[nodiscard]] absl::Status on_packet(comm::node_id source, const packet_header& header,
                                       comm::byte_span body) override;
  [[nodiscard]] absl::Status on_submission(const submission& s, bool& taken) override;

  // Counters 0..slots.size()-1 held here live in `slots` (zeroed memory that outlives the
  // NIC) instead of the NIC's own memory, so that hosts that map them can add with a CPU
  // atomic beside this NIC. Call before the NIC starts.
  void place_counters(std::span<std::atomic<std::uint64_t>> slots) { placed_ = slots; }

  // The counters this NIC holds in its own memory (for tests and status).
  [[nodiscard]] std::size_t counters() const { return counters_.size(); }

 private:
  // Applies `request` from `source` and sends or delivers the answer.
  [[nodiscard]] absl::Status apply(comm::node_id source, const fetch_add_request& request);

  nic_context& nic_;
  std::span<std::atomic<std::uint64_t>> placed_;
  absl::flat_hash_map<std::uint64_t, std::uint64_t> counters_;
};

}  // namespace iso::nicfw
