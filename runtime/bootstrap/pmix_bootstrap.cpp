#include "runtime/bootstrap/pmix_bootstrap.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "absl/strings/str_format.h"

namespace iso::runtime {
namespace {

// Callers' keys and the barriers' own keys live apart.
std::string user_key(std::string_view key) { return "kv." + std::string(key); }

// A key per barrier would make every fence carry all barriers so far (each fence got slower,
// seconds per hundred barriers after a thousand), so two keys take turns. A node reads a
// barrier's key only after its fence, and the next barrier but one, which puts that key
// again, cannot start before every node has arrived at the next one, having read it.
std::string barrier_key(std::uint64_t ticket) { return absl::StrFormat("barrier.%u", ticket % 2); }

// What a node arrives with: ticket, digest and mark, always the same number of bytes. PMIx
// 4.2 loses a key that is put again with a value of another size (the next fence's get finds
// nothing), so the size never changes.
constexpr std::size_t kArrivalBytes = 3 * sizeof(std::uint64_t);

std::string encode_arrival(std::uint64_t ticket, std::uint64_t digest, std::uint64_t mark) {
  const std::array<std::uint64_t, 3> words{ticket, digest, mark};
  return std::string(reinterpret_cast<const char*>(words.data()), kArrivalBytes);
}

}  // namespace

pmix_bootstrap::pmix_bootstrap(std::shared_ptr<pmix_session> session)
    : session_(std::move(session)) {}

absl::Status pmix_bootstrap::put(std::string_view key, std::string_view value) {
  if (key.empty()) return absl::InvalidArgumentError("bootstrap put: the key is empty");
  return session_->put(user_key(key), value);
}

absl::Status pmix_bootstrap::fence(absl::Duration timeout) { return session_->fence(timeout); }

absl::StatusOr<std::string> pmix_bootstrap::get(std::uint32_t node, std::string_view key) const {
  absl::StatusOr<std::string> value = session_->get(node, user_key(key));
  if (absl::IsNotFound(value.status())) {
    return absl::NotFoundError(
        absl::StrFormat("node %u published no bootstrap key '%s'", node, key));
  }
  return value;
}

absl::Status pmix_bootstrap::barrier(absl::Duration timeout) { return session_->fence(timeout); }

std::uint64_t pmix_bootstrap::barrier_arrive(std::uint64_t digest) {
  const std::uint64_t ticket = ++last_ticket_;
  // Never blocks, so an error of the put waits for barrier_passed() to report it.
  arrive_error_ = session_->put(barrier_key(ticket), encode_arrival(ticket, digest, mark_));
  fence_of_last_ticket_ = session_->start_fence();
  return ticket;
}

absl::StatusOr<bool> pmix_bootstrap::barrier_passed(std::uint64_t ticket) const {
  if (ticket != last_ticket_) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "barrier ticket %u is not the last one this node arrived with (%u)", ticket, last_ticket_));
  }
  if (!arrive_error_.ok()) return arrive_error_;
  absl::StatusOr<bool> done = session_->fence_done(fence_of_last_ticket_);
  if (!done.ok() || !*done) return done;
  if (arrivals_ticket_ == ticket) return true;
  std::vector<arrival> arrivals(size());
  std::uint64_t max_mark = 0;
  for (std::uint32_t n = 0; n < size(); ++n) {
    absl::StatusOr<arrival> a = arrival_of(n, ticket);
    if (!a.ok()) {
      // The launcher may end a fence without a process that died in it, and its data.
      if (absl::Status gone = session_->look_for_gone_nodes(); !gone.ok()) return gone;
      return a.status();
    }
    arrivals[n] = *a;
    max_mark = std::max(max_mark, a->mark);
  }
  arrivals_ = std::move(arrivals);
  arrivals_ticket_ = ticket;
  max_mark_ = max_mark;
  return true;
}

absl::StatusOr<pmix_bootstrap::arrival> pmix_bootstrap::arrival_of(std::uint32_t node,
                                                                   std::uint64_t ticket) const {
  absl::StatusOr<std::string> bytes = session_->get(node, barrier_key(ticket));
  if (!bytes.ok()) return bytes.status();
  if (bytes->size() != kArrivalBytes) {
    return absl::InternalError(
        absl::StrFormat("node %u arrived at barrier %u with %u bytes, not the %u of a ticket, a "
                        "digest and a mark",
                        node, ticket, bytes->size(), kArrivalBytes));
  }
  std::array<std::uint64_t, 3> words{};
  std::memcpy(words.data(), bytes->data(), kArrivalBytes);
  if (words[0] != ticket) {
    // Its put for this barrier did not reach this node before the fence ended.
    return absl::InternalError(absl::StrFormat(
        "node %u: what node %u arrived with at barrier %u is still that of barrier %u", rank(),
        node, ticket, words[0]));
  }
  return arrival{words[1], words[2]};
}

std::uint64_t pmix_bootstrap::barrier_digest(std::uint32_t node, std::uint64_t ticket) const {
  if (ticket != arrivals_ticket_ || node >= arrivals_.size()) return 0;
  return arrivals_[node].digest;
}

bool pmix_bootstrap::barrier_arrived(std::uint32_t node, std::uint64_t ticket) const {
  if (ticket == arrivals_ticket_) return true;  // it passed: everyone arrived
  return node == rank() && ticket == last_ticket_;
}

}  // namespace iso::runtime
