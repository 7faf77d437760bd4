// The host's side of the NIC's fetch-and-add counters (nicfw/fetch_add_service.hpp): it
// submits requests and collects the answers the event loop hands it, by ticket.
//
//   fetch_add_client counters(loop);
//   absl::StatusOr<std::uint32_t> t = counters.fetch_add(/*owner=*/0, /*counter=*/7, 1);
//   ISO_RETURN_IF_ERROR(loop.wait_for([&] { return counters.ready(*t); }));
//   std::uint64_t before = counters.take(*t);
//
// One thread uses it (the node's application thread).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
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
  [[nodiscard]] bool ready(std::uint32_t ticket) const {
    return ticket < answers_.size() && answers_[ticket].has_value();
  }
  // The answer; the ticket is free again. Precondition: ready(ticket).
  [[nodiscard]] std::uint64_t take(std::uint32_t ticket);
  [[nodiscard]] std::size_t outstanding() const { return outstanding_; }

  void on_delivery(const nicfw::delivery& d) override;

 private:
  event_loop& loop_;
  std::vector<std::optional<std::uint64_t>> answers_;  // by ticket
  std::vector<bool> open_;                             // by ticket: issued, not yet taken
  std::vector<std::uint32_t> free_;
  std::size_t outstanding_ = 0;
};

}  // namespace iso::runtime
