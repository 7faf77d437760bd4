#include "iso/isochron.hpp"

#include "base/log.hpp"
#include "iso/error.hpp"
#include "iso/node.hpp"
#include "runtime/node_state.hpp"

namespace iso {
namespace {
runtime::shared_memory_manager& smm_of(node& n) { return detail::node_state::of(n).smm(); }
}  // namespace

isochron::isochron(node& n) : node_(n) { detail::throw_if_error(smm_of(n).begin()); }

isochron::~isochron() {
  if (!open_) return;
  open_ = false;
  if (absl::Status s = smm_of(node_).end(); !s.ok()) {
    ISO_LOG(runtime, error, "ending an isochron failed: %s", std::string(s.message()));
  }
}

void isochron::end() {
  if (!open_) return;
  open_ = false;
  detail::throw_if_error(smm_of(node_).end());
}

detail::read_handle isochron::read_raw(address a, std::size_t width, std::size_t count) {
  runtime::read_slots::ticket t;
  detail::throw_if_error(smm_of(node_).read(static_cast<std::uint8_t>(width), a,
                                            static_cast<std::uint32_t>(count), t));
  return detail::read_handle(&node_, {t.slot, t.generation});
}

void isochron::write_raw(address a, std::size_t width, std::span<const std::uint64_t> values) {
  detail::throw_if_error(smm_of(node_).write(static_cast<std::uint8_t>(width), a, values));
}

void isochron::sched_raw(address a, std::size_t width) {
  detail::throw_if_error(smm_of(node_).sched(static_cast<std::uint8_t>(width), a));
}

void isochron::assign_raw(address a, std::size_t width, std::uint64_t bits) {
  detail::throw_if_error(smm_of(node_).assign(static_cast<std::uint8_t>(width), a, bits));
}

void isochron::send(node_id to, handler_id handler, std::span<const std::byte> payload) {
  detail::throw_if_error(smm_of(node_).message(to, handler, payload));
}

void isochron::send(node_id to, std::span<const std::byte> payload) {
  detail::throw_if_error(smm_of(node_).queued_message(to, payload));
}

void isochron::signal(channel_id channel) { detail::throw_if_error(smm_of(node_).signal(channel)); }

}  // namespace iso
