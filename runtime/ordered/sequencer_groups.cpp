#include "runtime/ordered/sequencer_groups.hpp"

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace iso::runtime {

sequencer_groups::sequencer_groups(event_loop& loop, nicfw::multicast_service& service,
                                   nicfw::tree_shape shape, absl::Duration window_timeout)
    : loop_(loop), service_(service), shape_(shape), window_timeout_(window_timeout) {
  constexpr nicfw::delivery_kind kKinds[] = {nicfw::kMulticastDelivery};
  loop.add_unit(*this, kKinds);
}

void sequencer_groups::open(std::uint32_t group, std::span<const comm::node_id> members) {
  groups_[group].members.assign(members.begin(), members.end());
}

std::size_t sequencer_groups::max_batch(std::size_t members) const {
  // The submission record holds the prefix, the members and the batch; the delivery record
  // a header of the host queue's own, which 64 bytes cover.
  const std::size_t overhead =
      sizeof(nicfw::multicast_prefix) + members * sizeof(comm::node_id) + 64;
  const std::size_t record = loop_.nic().channel().max_record();
  return record > overhead ? record - overhead : 0;
}

absl::Status sequencer_groups::send(std::uint32_t group, std::span<const std::byte> batch) {
  const group_state& g = groups_[group];
  const nicfw::multicast_prefix prefix{.root = loop_.nic().self(),
                                       .group = group,
                                       .sequencer = g.members.front(),
                                       .members = static_cast<std::uint16_t>(g.members.size()),
                                       .shape = shape_,
                                       .flags = nicfw::kMulticastSequenced};
  const comm::byte_span pieces[] = {std::as_bytes(std::span(&prefix, 1)),
                                    std::as_bytes(std::span(g.members)), batch};
  // Deliveries keep being filed while we wait: our own window frees only as the members
  // (this one too) take what is in flight.
  absl::StatusOr<bool> submitted = loop_.wait_until(absl::Now() + window_timeout_, [&] {
    return service_.host_may_submit() &&
           loop_.nic().channel().host_submit(nicfw::kMulticastSubmission, prefix.root, pieces);
  });
  if (!submitted.ok()) return submitted.status();
  if (!*submitted) {
    return absl::DeadlineExceededError(absl::StrFormat(
        "ordered group %u on node %u: the multicasts this node sent were not taken within %s "
        "(a member of the group, nodes %s, is not calling into the runtime); a batch of %u "
        "bytes was not sent",
        group, prefix.root, absl::FormatDuration(window_timeout_), absl::StrJoin(g.members, " "),
        batch.size()));
  }
  service_.host_submitted();
  loop_.nic().wake();
  return absl::OkStatus();
}

void sequencer_groups::on_delivery(const nicfw::delivery& d) {
  ++consumed_unreported_;
  auto it = groups_.find(d.sequence);
  if (it == groups_.end()) {
    loop_.fail(absl::InvalidArgumentError(
        absl::StrFormat("ordered message from node %u for group %u, which this node has not opened",
                        d.source, d.sequence)));
    return;
  }
  if (absl::Status s = unpack_batch(d.source, d.sequence, d.payload, it->second.inbox); !s.ok()) {
    loop_.fail(std::move(s));
  }
}

absl::Status sequencer_groups::end_round(std::uint64_t closed, bool& did_work) {
  (void)closed;
  if (consumed_unreported_ == 0) return absl::OkStatus();
  // Copied out: the NIC may return the credits (and wakes to do so).
  service_.host_consumed(consumed_unreported_);
  consumed_unreported_ = 0;
  loop_.nic().wake();
  did_work = true;
  return absl::OkStatus();
}

}  // namespace iso::runtime
