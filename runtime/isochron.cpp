#include "iso/isochron.hpp"

#include <limits>

#include "absl/strings/str_format.h"
#include "iso/error.hpp"
#include "iso/node.hpp"
#include "runtime/node_state.hpp"

namespace iso {
namespace {
runtime::shared_memory_manager& smm_of(node& n) { return detail::node_state::of(n).smm(); }

// One operation covers at most 2^32-1 variables (its count travels in 32 bits).
std::uint32_t checked_count(std::size_t count, const char* what) {
  if (count > std::numeric_limits<std::uint32_t>::max()) {
    throw iso::error(error_code::out_of_range,
                     absl::StrFormat("a block %s of %u variables: one operation covers at most "
                                     "%u; split it",
                                     what, count, std::numeric_limits<std::uint32_t>::max()));
  }
  return static_cast<std::uint32_t>(count);
}
}  // namespace

namespace detail {
void check_block(std::size_t size, std::size_t first, std::size_t count, const char* what) {
  if (first <= size && count <= size - first) return;
  throw iso::error(error_code::out_of_range,
                   absl::StrFormat("a block %s of %u variables from index %u of an array of %u",
                                   what, count, first, size));
}
}  // namespace detail

isochron::isochron(node& n) : node_(n) {
  detail::node_state& state = detail::node_state::of(n);
  // A node that failed (a pulse failed, or an isochron was lost at scope exit) issues
  // nothing more: later isochrons must not execute as if the lost one had.
  if (!state.health().ok()) detail::throw_status(state.health());
  detail::throw_if_error(state.open_isochron());
}

isochron::~isochron() {
  if (!open_) return;
  open_ = false;
  absl::Status s = detail::node_state::of(node_).close_isochron();
  if (s.ok()) return;
  // Nobody can be told here, and the isochron is lost: the node fails instead, so that the
  // error reaches the program at its next call that waits (at the latest when iso::run
  // ends the node) rather than vanishing.
  detail::node_state::of(node_).fail(absl::Status(
      s.code(), absl::StrFormat("node %u lost an isochron ended at scope exit (without end()), "
                                "which could not be issued: %s",
                                node_.id(), s.message())));
}

void isochron::end() {
  if (!open_) return;
  open_ = false;
  detail::throw_if_error(detail::node_state::of(node_).close_isochron());
}

detail::read_handle isochron::read_raw(address a, std::size_t width, std::size_t count) {
  const std::uint32_t n = checked_count(count, "read");
  detail::node_state& state = detail::node_state::of(node_);
  runtime::read_slots::ticket t;
  detail::throw_if_error(state.smm().read(static_cast<std::uint8_t>(width), a, n, t));
  return detail::read_handle(state.link(), {t.slot, t.generation, state.isochron_serial()});
}

detail::read_handle isochron::read_modify_write_raw(rmw_op op, address a, std::size_t width,
                                                    std::span<const std::uint64_t> operands) {
  const auto code = static_cast<runtime::op_code>(op);
  if (!runtime::is_rmw(code) || operands.size() != runtime::rmw_operands(code)) {
    throw iso::error(error_code::invalid_argument,
                     absl::StrFormat("read-modify-write %u with %u operands", static_cast<int>(op),
                                     operands.size()));
  }
  detail::node_state& state = detail::node_state::of(node_);
  runtime::read_slots::ticket t;
  detail::throw_if_error(
      state.smm().read_modify_write(code, static_cast<std::uint8_t>(width), a, operands, t));
  return detail::read_handle(state.link(), {t.slot, t.generation, state.isochron_serial()});
}

void isochron::write_raw(address a, std::size_t width, std::span<const std::uint64_t> values) {
  (void)checked_count(values.size(), "write");
  detail::throw_if_error(smm_of(node_).write(static_cast<std::uint8_t>(width), a, values));
}

void isochron::sched_raw(address a, std::size_t width) {
  detail::throw_if_error(smm_of(node_).sched(static_cast<std::uint8_t>(width), a));
}

void isochron::assign_raw(address a, std::size_t width, std::uint64_t bits) {
  detail::throw_if_error(smm_of(node_).assign(static_cast<std::uint8_t>(width), a, bits));
}

void isochron::send(node_id to, handler_id handler, std::span<const std::byte> payload) {
  if (detail::reserved_handler(handler)) {
    throw iso::error(error_code::invalid_argument,
                     absl::StrFormat("handler id %u is reserved for the runtime", handler));
  }
  detail::throw_if_error(smm_of(node_).message(to, handler, payload));
}

void isochron::send(node_id to, std::span<const std::byte> payload) {
  detail::throw_if_error(smm_of(node_).queued_message(to, payload));
}

void isochron::signal(channel_id channel) { detail::throw_if_error(smm_of(node_).signal(channel)); }

}  // namespace iso
