// What an iso::node is made of on the inside: its bootstrap, its transport and the
// messages it has received but not yet handed to the application.
#pragma once

#include <deque>
#include <memory>

#include "absl/status/status.h"
#include "comm/transport.hpp"
#include "iso/node.hpp"
#include "runtime/bootstrap/bootstrap.hpp"

namespace iso::detail {

class node_state {
 public:
  node_state(std::unique_ptr<runtime::bootstrap> boot, std::unique_ptr<comm::transport> transport,
             const iso::options& opts);

  // Builds the public object around a state (node's constructor is private).
  static std::unique_ptr<node> make_node(std::unique_ptr<node_state> state);

  [[nodiscard]] node_id id() const { return boot_->rank(); }
  [[nodiscard]] std::uint32_t count() const { return boot_->size(); }
  [[nodiscard]] const iso::options& options() const { return options_; }
  [[nodiscard]] std::size_t max_message_size() const { return transport_->max_packet_size(); }
  [[nodiscard]] runtime::bootstrap& boot() { return *boot_; }

  [[nodiscard]] absl::Status barrier();
  [[nodiscard]] absl::Status send(node_id to, std::span<const std::byte> bytes);
  [[nodiscard]] absl::StatusOr<message> receive();

 private:
  // Moves arriving packets to inbox_ without copying them.
  [[nodiscard]] absl::Status poll_into_inbox();

  std::unique_ptr<runtime::bootstrap> boot_;
  std::unique_ptr<comm::transport> transport_;
  iso::options options_;
  std::deque<comm::held_packet> inbox_;
};

// Throws iso::error carrying `status` (which must not be OK).
[[noreturn]] void throw_status(const absl::Status& status);

}  // namespace iso::detail
