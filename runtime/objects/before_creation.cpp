// Calls and copies for an object created through the objects order that reach a node
// before it has applied the creation: the sender applied it first, and the node keeps what
// came until it catches up (object_table::before_creation_).
// - A call is acknowledged (the caller waits for this node's answer, not its own deadline)
//   and served once the creation is applied. A creation may never come for it (a node
//   calls an id that no node creates), or come late, so a call kept for the call timeout is
//   answered deadline_exceeded naming the object; beyond kMaxParkedCalls kept for one
//   caller at once, its next is refused at once (resource_exhausted), naming the object.
// - A copy is kept until the creation comes, however late: it was shipped by a node that
//   applied the creation and the move, so the creation reaches this node too unless the job
//   fails, and dropping the copy would lose the object's state (and every call waiting in
//   it). Copies are as many as the moves in flight to this node.
// Checking the calls' deadlines reads the clock, in rounds only while calls are kept.
#include <algorithm>
#include <utility>

#include "absl/strings/str_format.h"
#include "runtime/objects/object_table.hpp"

namespace iso::runtime {

void object_table::park_request(request r) {
  std::size_t& from_caller = parked_calls_by_caller_[r.from];
  if (from_caller >= kMaxParkedCalls) {
    send_reply(r.from, r.call,
               outcome::failure(absl::ResourceExhaustedError(absl::StrFormat(
                   "object %u, operation %u, called from node %u: node %u has not applied the "
                   "object's creation and already keeps %u calls from node %u for objects it "
                   "has not created yet, the most it keeps for one caller; the call is refused "
                   "and did not run",
                   r.object, r.op, r.from, self_, kMaxParkedCalls, r.from))));
    return;
  }
  send_accepted(r);  // alive: the caller waits for the creation here or for this node's answer
  const absl::Time now = absl::Now();
  next_parked_expiry_ = std::min(next_parked_expiry_, now + call_timeout_);
  ++from_caller;
  ++parked_calls_;
  const object_id id = r.object;
  before_creation_[id].requests.push_back({.item = std::move(r), .since = now});
}

void object_table::park_transfer(object_id id, std::vector<std::byte> packet) {
  before_creation_[id].transfers.push_back(std::move(packet));
  ++parked_copies_;
}

void object_table::unpark(object_id id) {
  auto early = before_creation_.extract(id);
  if (early.empty()) return;
  for (const parked_request& r : early.mapped().requests) --parked_calls_by_caller_[r.item.from];
  parked_calls_ -= early.mapped().requests.size();
  parked_copies_ -= early.mapped().transfers.size();
  // A copy first: a call that came before it may then run at once.
  for (std::vector<std::byte>& t : early.mapped().transfers) on_transfer(std::move(t));
  for (parked_request& r : early.mapped().requests) serve(std::move(r.item));
}

void object_table::expire_parked(bool& did_work) {
  const absl::Time now = absl::Now();
  if (now < next_parked_expiry_) return;
  absl::Time next = absl::InfiniteFuture();
  for (auto it = before_creation_.begin(); it != before_creation_.end();) {
    const object_id id = it->first;
    before_creation& kept = it->second;
    std::erase_if(kept.requests, [&](const parked_request& p) {
      if (now - p.since < call_timeout_) {
        next = std::min(next, p.since + call_timeout_);
        return false;
      }
      const request& r = p.item;
      send_reply(r.from, r.call,
                 outcome::failure(absl::DeadlineExceededError(absl::StrFormat(
                     "object %u, operation %u, called from node %u: node %u did not apply the "
                     "object's creation within %s of the call's arrival (no node creates that "
                     "id, or its creation is late in reaching node %u); the call did not run",
                     id, r.op, r.from, self_, absl::FormatDuration(call_timeout_), self_))));
      --parked_calls_by_caller_[r.from];
      --parked_calls_;
      did_work = true;
      return true;
    });
    it = kept.requests.empty() && kept.transfers.empty() ? before_creation_.erase(it)
                                                         : std::next(it);
  }
  next_parked_expiry_ = next;
}

}  // namespace iso::runtime
