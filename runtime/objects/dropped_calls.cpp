// Dropped calls that have to go out again (iso::object_call dropped before its result).
//
// A dropped request to a single copy that became replicated before its owner ran it is
// answered "moved: replicated": it ran nowhere, and its caller must put it into the objects
// order (a write) or run it on its replica (a read), or a dropped write is lost. The answer
// arrives whenever this node makes progress, and nothing waits for the dropped call; so its
// number is queued (redo_dropped_) and the call is dispatched again by the node's next
// object call, by its next poll (node::poll(), object_call::ready()) when that needs no
// wait, and at the latest before the node leaves the job, which first waits for the answers
// to its dropped requests that are still unanswered. A dropped call is dispatched at most
// once per "moved" answer, and the answer is the owner's promise that it did not run it, so
// it runs once.
#include <cstdint>
#include <optional>

#include "runtime/objects/object_table.hpp"

namespace iso::runtime {

absl::Status object_table::dispatch_dropped() {
  while (!redo_dropped_.empty()) {
    const std::uint64_t dropped = redo_dropped_.front();
    redo_dropped_.pop_front();
    if (absl::Status s = redo(dropped); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status object_table::dispatch_ready_dropped() {
  // In the order they came: one that must wait holds back those behind it.
  while (!redo_dropped_.empty() && redo_ready(redo_dropped_.front())) {
    const std::uint64_t dropped = redo_dropped_.front();
    redo_dropped_.pop_front();
    if (absl::Status s = redo(dropped); !s.ok()) return s;
  }
  return absl::OkStatus();
}

namespace {

// Sent to an owner that has neither answered nor said that it keeps the call. One told to go
// out again waits in redo_dropped_; one in the order needs nothing more from this node; one
// given up at its deadline was reported to its caller as such.
template <typename Pending>
bool unanswered(const Pending& p) {
  return p.abandoned && !p.given_up && !p.done && p.sent && !p.acknowledged && !p.redo;
}

}  // namespace

std::optional<std::uint64_t> object_table::unanswered_dropped() const {
  for (const auto& [call, p] : pending_) {
    if (unanswered(p) && overdue(p)) return call;
  }
  for (const auto& [call, p] : pending_) {
    if (unanswered(p)) return call;
  }
  return std::nullopt;
}

absl::Status object_table::settle_dropped() {
  for (;;) {
    if (absl::Status s = dispatch_dropped(); !s.ok()) return s;
    std::optional<std::uint64_t> open = unanswered_dropped();
    if (!open) return absl::OkStatus();
    if (absl::Status s = loop_.wait_for([&] {
          open = unanswered_dropped();
          return !redo_dropped_.empty() || !open || overdue(pending_.at(*open));
        });
        !s.ok()) {
      return s;
    }
    if (redo_dropped_.empty() && open && overdue(pending_.at(*open))) return give_up(*open);
  }
}

}  // namespace iso::runtime
