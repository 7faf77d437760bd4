#include "runtime/messages/plain_messages.hpp"

#include "absl/strings/str_format.h"
#include "runtime/progress/credit_wait.hpp"
#include "runtime/progress/direct_tags.hpp"

namespace iso::runtime {
namespace {

struct plain_header {
  direct_tag tag = direct_tag::plain;
  std::uint8_t reserved[7] = {};
};

}  // namespace

plain_messages::plain_messages(event_loop& loop, const options& opts, direct_tag tag)
    : loop_(loop), options_(opts), tag_(tag) {
  // Nothing to do at the end of a round: a round is on the path of every message.
  loop.add_direct_unit(*this, static_cast<std::uint8_t>(tag), /*ends_rounds=*/false);
  loop.add_pressure_relief(*this);
}

absl::Status plain_messages::send(comm::node_id to, std::span<const std::byte> bytes) {
  nicfw::engine& nic = loop_.nic();
  if (to >= nic.topo().nodes()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("send to node %u: the job has nodes 0..%u", to, nic.topo().nodes() - 1));
  }
  const std::size_t limit = max_message_size(nic);
  if (bytes.size() > limit) {
    return absl::OutOfRangeError(
        absl::StrFormat("message of %u bytes exceeds the maximum of %u", bytes.size(), limit));
  }
  const plain_header header{.tag = tag_};
  const comm::byte_span pieces[2] = {std::as_bytes(std::span(&header, 1)), bytes};
  nicfw::credit_ledger& credits = nic.credits();
  const std::size_t size = sizeof(header) + bytes.size();
  auto has_credits = [&] {
    if (credits.host_may_send(to, nicfw::credit_class::direct, size)) return true;
    credits.host_want(to, nicfw::credit_class::direct, size);
    return false;
  };
  if (!has_credits()) {
    if (absl::Status s = wait_for_credits(loop_, options_.credit_timeout, has_credits, "message",
                                          [] { return std::string(); });
        !s.ok()) {
      return s;
    }
  }
  credits.host_consume(to, nicfw::credit_class::direct, size);
  return loop_.submit(nicfw::submission_kind::direct, to, pieces);
}

void plain_messages::free(comm::node_id source, std::size_t bytes) {
  loop_.nic().credits().host_free(source, nicfw::credit_class::direct,
                                  sizeof(plain_header) + bytes + nicfw::kPacketOverhead);
}

void plain_messages::on_delivery(const nicfw::delivery& d) {
  if (d.payload.size() < sizeof(plain_header)) {
    loop_.fail(malformed_direct_packet(d));
    return;
  }
  loop_.nic().credits().host_received(d.source, nicfw::credit_class::direct, d.payload.size());
  if (!on_message_) return;
  if (options_.in_place) loop_.nic().channel().host_hold();
  on_message_(d.source, d.payload.subspan(sizeof(plain_header)), d.record);
}

void plain_messages::relieve_pressure(bool& did_work) {
  if (loop_.nic().channel().host_holds_records() && on_pressure_) {
    on_pressure_();
    did_work = true;
  }
}

}  // namespace iso::runtime
