// The host's side of the NIC's fetch-and-add counters (nicfw/fetch_add_service.hpp): it
// submits requests and collects the answers the event loop hands it, by ticket.
//
//   fetch_add_client counters(loop);
//   absl::StatusOr<std::uint32_t> t = counters.fetch_add(/*owner=*/0, /*counter=*/7, 1);
//   ISO_RETURN_IF_ERROR(loop.wait_for([&] { return counters.ready(*t); }));
//   std::uint64_t before = counters.take(*t);
//
// The public API's node::fetch_add has its answers go elsewhere (a read slot, so that the
// handle is a read's): fetch_add_to() names a destination, and the sink set with
// set_sink() receives the answer instead of the ticket table.
//
// One thread uses it (the node's application thread).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "nicfw/fetch_add_service.hpp"
#include "runtime/progress/event_loop.hpp"

namespace iso::runtime {

class fetch_add_client final : public delivery_unit {
 public:
  // Registers with `loop`, whose NIC must run fetch_add_service.
  explicit fetch_add_client(event_loop& loop);

  // Adds `delta` to counter `counter` held by node `owner`'s NIC; returns the ticket of the
  // answer (the value before the add). InvalidArgument for a node outside the job.
  [[nodiscard]] absl::StatusOr<std::uint32_t> fetch_add(comm::node_id owner, std::uint64_t counter,
                                                        std::uint64_t delta);
  // Like fetch_add(), but the answer goes to the sink with `destination` (no ticket).
  [[nodiscard]] absl::Status fetch_add_to(comm::node_id owner, std::uint64_t counter,
                                          std::uint64_t delta, std::uint32_t destination);
  // Where fetch_add_to()'s answers go: (destination, value before the add).
  void set_sink(std::function<void(std::uint32_t destination, std::uint64_t before)> sink) {
    sink_ = std::move(sink);
  }
  [[nodiscard]] bool ready(std::uint32_t ticket) const {
    return ticket < answers_.size() && answers_[ticket].has_value();
  }
  // The answer; the ticket is free again. Precondition: ready(ticket).
  [[nodiscard]] std::uint64_t take(std::uint32_t ticket);
  [[nodiscard]] std::size_t outstanding() const { return outstanding_; }

  void on_delivery(const nicfw::delivery& d) override;

 private:
  [[nodiscard]] absl::Status check_owner(comm::node_id owner) const;
  [[nodiscard]] absl::Status submit(comm::node_id owner, const nicfw::fetch_add_request& request);

  event_loop& loop_;
  std::function<void(std::uint32_t, std::uint64_t)> sink_;
  std::vector<std::optional<std::uint64_t>> answers_;  // by ticket
  std::vector<bool> open_;                             // by ticket: issued, not yet taken
  std::vector<std::uint32_t> free_;
  std::size_t outstanding_ = 0;
};

}  // namespace iso::runtime
