#include "runtime/node_state.hpp"

#include <thread>

#include "absl/time/time.h"
#include "base/check.hpp"
#include "iso/error.hpp"

namespace iso {

struct message::holder {
  comm::held_packet packet;
};

message::message() = default;
message::message(message&&) noexcept = default;
message& message::operator=(message&&) noexcept = default;
message::~message() = default;

namespace detail {

void throw_status(const absl::Status& status) {
  ISO_CHECK(!status.ok()) << "throw_status with an OK status";
  throw iso::error(static_cast<error_code>(status.code()), std::string(status.message()));
}

node_state::node_state(std::unique_ptr<runtime::bootstrap> boot,
                       std::unique_ptr<comm::transport> transport, const iso::options& opts)
    : boot_(std::move(boot)), transport_(std::move(transport)), options_(opts) {}

std::unique_ptr<node> node_state::make_node(std::unique_ptr<node_state> state) {
  return std::unique_ptr<node>(new node(std::move(state)));
}

absl::Status node_state::barrier() {
  return boot_->barrier(absl::FromChrono(options_.barrier_timeout));
}

absl::Status node_state::poll_into_inbox() {
  std::size_t handled = 0;
  return transport_->poll(
      [this](comm::received_packet& packet) { inbox_.push_back(packet.hold()); }, handled);
}

absl::Status node_state::send(node_id to, std::span<const std::byte> bytes) {
  for (;;) {
    absl::Status sent = transport_->send(to, bytes);
    if (!absl::IsUnavailable(sent)) return sent;
    // Keep draining our own inbound while the receiver catches up, so that two nodes
    // flooding each other cannot deadlock.
    if (absl::Status polled = poll_into_inbox(); !polled.ok()) return polled;
    std::this_thread::yield();
  }
}

absl::StatusOr<message> node_state::receive() {
  // Spin briefly (a message often follows within a microsecond), then spin yielding (more
  // nodes than cores: let the one holding the work run), then sleep on the doorbell so that
  // an idle node does not burn a core.
  constexpr int kTightPolls = 256;
  constexpr int kYieldingPolls = 256;
  for (int polls = 0; inbox_.empty(); ++polls) {
    if (absl::Status polled = poll_into_inbox(); !polled.ok()) return polled;
    if (!inbox_.empty()) break;
    if (polls >= kTightPolls + kYieldingPolls) {
      transport_->wait(absl::Milliseconds(100));
    } else if (polls >= kTightPolls) {
      std::this_thread::yield();
    }
  }
  message out;
  out.holder_ = std::make_unique<message::holder>(message::holder{std::move(inbox_.front())});
  inbox_.pop_front();
  out.source_ = out.holder_->packet.source();
  out.bytes_ = out.holder_->packet.bytes();
  return out;
}

}  // namespace detail

node::node(std::unique_ptr<detail::node_state> state) : state_(std::move(state)) {}
node::~node() = default;

node_id node::id() const { return state_->id(); }
std::uint32_t node::count() const { return state_->count(); }
const options& node::options() const { return state_->options(); }
std::size_t node::max_message_size() const { return state_->max_message_size(); }

void node::barrier() {
  if (absl::Status s = state_->barrier(); !s.ok()) detail::throw_status(s);
}

void node::send(node_id to, std::span<const std::byte> bytes) {
  if (absl::Status s = state_->send(to, bytes); !s.ok()) detail::throw_status(s);
}

message node::receive() {
  absl::StatusOr<message> m = state_->receive();
  if (!m.ok()) detail::throw_status(m.status());
  return *std::move(m);
}

}  // namespace iso
