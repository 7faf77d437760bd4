// The public API of the NIC's one-sided services: counters (iso/counter.hpp) and remote
// store (iso/window.hpp). Both check everything before anything is sent, so that bad input
// is an error of the call that made it, never a refusal from another node.
#include <cstring>
#include <new>

#include "absl/strings/str_format.h"
#include "iso/error.hpp"
#include "runtime/collective_digest.hpp"
#include "runtime/node_state.hpp"

namespace iso {
namespace detail {
namespace {

constexpr std::size_t kMaxWindowBytes = std::size_t{1} << 40;

}  // namespace

absl::StatusOr<counter> node_state::allocate_counter(node_id holder) {
  absl::StatusOr<collective_turn> turn = begin_collective("allocate_counter()");
  if (!turn.ok()) return turn.status();
  if (holder >= count()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("allocate_counter(%u): the job has nodes 0..%u", holder, count() - 1));
  }
  const std::uint64_t index = counter_holders_.size();
  counter_holders_.push_back(holder);
  const std::uint64_t digest = runtime::collective_digest(runtime::collective_digest::kind::counter)
                                   .add(agreement_)
                                   .add(index)
                                   .add(holder)
                                   .value();
  if (absl::Status s = rendezvous(
          *turn, digest, absl::StrFormat("allocate_counter(%u) as counter %u", holder, index));
      !s.ok()) {
    return s;
  }
  return counter(holder, index);
}

absl::Status node_state::check_counter(const counter& c) const {
  if (!c.valid()) {
    return absl::InvalidArgumentError(
        "fetch_add on a counter that names none (default-constructed); use one that "
        "allocate_counter returned");
  }
  if (c.holder() >= count()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("fetch_add on counter %u of node %u: the job has nodes 0..%u", c.index(),
                        c.holder(), count() - 1));
  }
  if (c.index() >= counter_holders_.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "fetch_add on counter %u of node %u: no such counter (this node allocated %u)", c.index(),
        c.holder(), counter_holders_.size()));
  }
  if (counter_holders_[c.index()] != c.holder()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("fetch_add on counter %u of node %u: counter %u is held by node %u",
                        c.index(), c.holder(), c.index(), counter_holders_[c.index()]));
  }
  return absl::OkStatus();
}

absl::StatusOr<window_id_and_size> node_state::register_window(std::size_t bytes) {
  absl::StatusOr<collective_turn> turn = begin_collective("register_window()");
  if (!turn.ok()) return turn.status();
  if (bytes == 0) return absl::InvalidArgumentError("register_window(0): a window needs bytes");
  if (bytes > kMaxWindowBytes) {
    return absl::OutOfRangeError(absl::StrFormat(
        "register_window(%u): a window may have at most %u bytes", bytes, kMaxWindowBytes));
  }
  const auto id = static_cast<std::uint32_t>(window_memory_.size());
  try {
    window_memory_.emplace_back(bytes);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("register_window(%u) on node %u: out of memory", bytes, this->id()));
  }
  if (absl::Status s = store_.register_window(id, window_memory_.back()); !s.ok()) return s;
  const std::uint64_t digest = runtime::collective_digest(runtime::collective_digest::kind::window)
                                   .add(agreement_)
                                   .add(id)
                                   .add(bytes)
                                   .value();
  if (absl::Status s =
          rendezvous(*turn, digest, absl::StrFormat("register_window(%u) as window %u", bytes, id));
      !s.ok()) {
    return s;
  }
  return window_id_and_size{.id = id, .bytes = bytes};
}

absl::Status node_state::check_access(const char* call, std::uint32_t window, node_id target,
                                      std::size_t offset, std::size_t bytes) const {
  if (!health().ok()) return health();
  if (window >= window_memory_.size()) {
    return absl::InvalidArgumentError(
        window == ~std::uint32_t{0}
            ? absl::StrFormat("%s on a window that names none (default-constructed); use one "
                              "that register_window returned",
                              call)
            : absl::StrFormat("%s on window %u: no such window (this node registered %u)", call,
                              window, window_memory_.size()));
  }
  if (target >= count()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s to node %u: the job has nodes 0..%u", call, target, count() - 1));
  }
  const std::size_t size = window_memory_[window].size();
  if (offset > size || bytes > size - offset) {
    return absl::OutOfRangeError(
        absl::StrFormat("%s of %u bytes at offset %u of window %u: outside its %u bytes", call,
                        bytes, offset, window, size));
  }
  if (bytes > max_message_size()) {
    return absl::OutOfRangeError(absl::StrFormat("%s of %u bytes: at most %u bytes at a time", call,
                                                 bytes, max_message_size()));
  }
  return absl::OkStatus();
}

}  // namespace detail

counter node::allocate_counter(node_id holder) {
  return detail::value_or_throw(state_->allocate_counter(holder));
}

value<std::uint64_t> node::fetch_add(const counter& c, std::uint64_t delta) {
  detail::node_state& state = *state_;
  detail::throw_if_error(state.check_counter(c));
  detail::throw_if_error(state.health());
  runtime::shared_memory_manager& smm = state.smm();
  const runtime::read_slots::ticket t = smm.open_slot(1);
  if (std::atomic<std::uint64_t>* word = state.same_host_counter(c)) {
    // The holder's NIC adds to the same word for callers elsewhere (counter_area.hpp).
    const std::uint64_t before = word->fetch_add(delta, std::memory_order_acq_rel);
    smm.read_result(state.id(), t.slot, 0, std::span(&before, 1));
    return value<std::uint64_t>(detail::read_handle(state.link(), {t.slot, t.generation, 0}));
  }
  if (absl::Status s = state.counters().fetch_add_to(c.holder(), c.index(), delta, t.slot);
      !s.ok()) {
    const std::uint64_t none = 0;
    smm.read_result(state.id(), t.slot, 0, std::span(&none, 1));
    smm.close(t);
    detail::throw_status(s);
  }
  // Not a read of an isochron: serial 0 is never the open isochron's.
  return value<std::uint64_t>(detail::read_handle(state.link(), {t.slot, t.generation, 0}));
}

window node::register_window(std::size_t bytes) {
  const detail::window_id_and_size w = detail::value_or_throw(state_->register_window(bytes));
  return window(w.id, w.bytes);
}

std::span<std::byte> node::local(const window& w) {
  detail::throw_if_error(state_->check_access("local()", w.id(), id(), 0, 0));
  return state_->local_window(w.id());
}

void node::put(const window& w, node_id target, std::size_t offset,
               std::span<const std::byte> bytes) {
  detail::throw_if_error(state_->check_access("put()", w.id(), target, offset, bytes.size()));
  detail::throw_if_error(state_->store().put(target, w.id(), offset, bytes));
}

remote_bytes node::get(const window& w, node_id target, std::size_t offset, std::size_t size) {
  detail::node_state& state = *state_;
  detail::throw_if_error(state.check_access("get()", w.id(), target, offset, size));
  runtime::shared_memory_manager& smm = state.smm();
  const auto words = static_cast<std::uint32_t>(std::max<std::size_t>(1, (size + 7) / 8));
  const runtime::read_slots::ticket t = smm.open_slot(words);
  if (absl::Status s = state.store().get(target, w.id(), offset, size, t.slot); !s.ok()) {
    const std::vector<std::uint64_t> none(words);
    smm.read_result(state.id(), t.slot, 0, none);
    smm.close(t);
    detail::throw_status(s);
  }
  return remote_bytes(detail::read_handle(state.link(), {t.slot, t.generation, 0}), size);
}

void node::fence() {
  detail::node_state& state = *state_;
  // Refused there even when nothing is outstanding, as documented: whether it would wait
  // must not depend on timing.
  detail::throw_if_error(state.refuse_where_waits_are_forbidden("fence()"));
  detail::throw_if_error(state.store().fence(absl::FromChrono(state.options().barrier_timeout)));
}

}  // namespace iso
