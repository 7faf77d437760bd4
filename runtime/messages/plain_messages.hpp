// Plain (non-isotach) messages between hosts, FIFO per pair, through the NIC's unicast
// service, with flow control (credit_class::direct). A received message stays in place in
// the NIC's receive queue until the receiver releases its record, and the sender's buffer
// space stays used until the receiver frees it: a message is never copied on the way in
// unless the queue runs full (set_pressure_handler).
//
//   plain_messages plain(loop, {.credit_timeout = absl::Seconds(60)});
//   plain.set_receiver([&](node_id from, std::span<const std::byte> bytes, std::uint64_t r) {
//     ...; plain.release(r); plain.free(from, bytes.size());
//   });
//   ISO_RETURN_IF_ERROR(plain.send(1, bytes));
//
// One thread uses it (the node's application thread).
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "runtime/progress/direct_tags.hpp"
#include "runtime/progress/event_loop.hpp"

namespace iso::runtime {

class plain_messages final : public delivery_unit {
 public:
  struct options {
    // How long a sender waits for credits before it reports the receiver.
    absl::Duration credit_timeout = absl::Seconds(60);
    // Whether a message stays in place for the receiver (release() frees it); without, the
    // receiver copies what it needs before it returns and must not call release().
    bool in_place = true;
  };
  using receiver =
      std::function<void(comm::node_id source, std::span<const std::byte> bytes, std::uint64_t)>;

  // Registers with `loop` for direct packets of `tag` (another instance, another tag: the
  // two share the direct credits to each peer).
  plain_messages(event_loop& loop, const options& opts, direct_tag tag = direct_tag::plain);

  // The largest message: what fits one NIC queue record with the headers around it.
  [[nodiscard]] static std::size_t max_message_size(nicfw::engine& nic) {
    return nic.channel().max_record() - 256;
  }

  // Sends `bytes` to `to`, waiting for credits. InvalidArgument for a node outside the
  // job, OutOfRange above max_message_size(), DeadlineExceeded when no credits came back.
  [[nodiscard]] absl::Status send(comm::node_id to, std::span<const std::byte> bytes);
  // Gets every message, in place: `record` names it for release().
  void set_receiver(receiver on_message) { on_message_ = std::move(on_message); }
  // Called when the NIC holds deliveries back because its receive queue is full while
  // messages are held in it: the receiver should give their records back (copying what it
  // still needs), or the queue could stay full for good.
  void set_pressure_handler(std::function<void()> on_pressure) {
    on_pressure_ = std::move(on_pressure);
  }
  // The message's bytes may be reused by the NIC.
  void release(std::uint64_t record) { loop_.nic().channel().host_release(record); }
  // The application is done with a message of `bytes` from `source`: its buffer space goes
  // back to the sender.
  void free(comm::node_id source, std::size_t bytes);

  void on_delivery(const nicfw::delivery& d) override;
  void relieve_pressure(bool& did_work) override;

 private:
  event_loop& loop_;
  options options_;
  direct_tag tag_;
  receiver on_message_;
  std::function<void()> on_pressure_;
};

}  // namespace iso::runtime
