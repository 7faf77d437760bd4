// Calls and copies for an object created through the objects order that reach a node
// before it has applied the creation: the sender applied it first, and the node keeps what
// came until it catches up (object_table::before_creation_). A creation may also never come
// (its creator failed before sending it, or a node calls an id that no node creates), so
// what is kept is bounded, in time and in number:
// - a call is acknowledged (the caller waits for this node's answer, not its own deadline)
//   and, once the call timeout has passed since it arrived with the creation still not
//   applied, answered deadline_exceeded naming the object; beyond kMaxParked kept at once,
//   it is refused at once (resource_exhausted), naming the object;
// - a copy is dropped with a warning once the call timeout has passed; beyond kMaxParked, the
//   node fails naming the object (a copy refused would be the object's state lost).
// Checking the deadlines reads the clock, in rounds only while something is kept.
#include <algorithm>
#include <utility>

#include "absl/strings/str_format.h"
#include "base/log.hpp"
#include "runtime/objects/object_table.hpp"

namespace iso::runtime {

void object_table::park_request(request r) {
  if (parked_ >= kMaxParked) {
    send_reply(r.from, r.call,
               outcome::failure(absl::ResourceExhaustedError(absl::StrFormat(
                   "object %u, operation %u, called from node %u: node %u has not applied the "
                   "object's creation and already keeps %u calls and copies for objects it has "
                   "not created yet, the most it keeps; the call is refused and did not run",
                   r.object, r.op, r.from, self_, kMaxParked))));
    return;
  }
  send_accepted(r);  // alive: the caller waits for the creation here or for this node's answer
  const absl::Time now = absl::Now();
  next_parked_expiry_ = std::min(next_parked_expiry_, now + call_timeout_);
  const object_id id = r.object;
  before_creation_[id].requests.push_back({.item = std::move(r), .since = now});
  ++parked_;
}

void object_table::park_transfer(object_id id, std::vector<std::byte> packet) {
  if (parked_ >= kMaxParked) {
    loop_.fail(absl::ResourceExhaustedError(absl::StrFormat(
        "object %u: a copy of it reached node %u before its creation there, and the node "
        "already keeps %u calls and copies for objects it has not created yet, the most it "
        "keeps",
        id, self_, kMaxParked)));
    return;
  }
  const absl::Time now = absl::Now();
  next_parked_expiry_ = std::min(next_parked_expiry_, now + call_timeout_);
  before_creation_[id].transfers.push_back({.item = std::move(packet), .since = now});
  ++parked_;
}

void object_table::unpark(object_id id) {
  auto early = before_creation_.extract(id);
  if (early.empty()) return;
  parked_ -= early.mapped().requests.size() + early.mapped().transfers.size();
  // A copy first: a call that came before it may then run at once.
  for (parked<std::vector<std::byte>>& t : early.mapped().transfers) {
    on_transfer(std::move(t.item));
  }
  for (parked<request>& r : early.mapped().requests) serve(std::move(r.item));
}

void object_table::expire_parked(bool& did_work) {
  const absl::Time now = absl::Now();
  if (now < next_parked_expiry_) return;
  absl::Time next = absl::InfiniteFuture();
  const auto expired = [&](absl::Time since) {
    if (now - since >= call_timeout_) return true;
    next = std::min(next, since + call_timeout_);
    return false;
  };
  for (auto it = before_creation_.begin(); it != before_creation_.end();) {
    const object_id id = it->first;
    before_creation& kept = it->second;
    std::erase_if(kept.requests, [&](const parked<request>& p) {
      if (!expired(p.since)) return false;
      const request& r = p.item;
      send_reply(r.from, r.call,
                 outcome::failure(absl::DeadlineExceededError(absl::StrFormat(
                     "object %u, operation %u, called from node %u: node %u did not apply the "
                     "object's creation within %s of the call's arrival (the creation never "
                     "came: its creator failed, or no node creates that id); the call did not "
                     "run",
                     id, r.op, r.from, self_, absl::FormatDuration(call_timeout_)))));
      --parked_;
      did_work = true;
      return true;
    });
    std::erase_if(kept.transfers, [&](const parked<std::vector<std::byte>>& p) {
      if (!expired(p.since)) return false;
      ISO_LOG(runtime, warn,
              "object %u: node %u dropped a copy of it (%u bytes) that came before its creation, "
              "which it did not apply within %s",
              id, self_, p.item.size(), absl::FormatDuration(call_timeout_));
      --parked_;
      did_work = true;
      return true;
    });
    it = kept.requests.empty() && kept.transfers.empty() ? before_creation_.erase(it)
                                                         : std::next(it);
  }
  next_parked_expiry_ = next;
}

}  // namespace iso::runtime
