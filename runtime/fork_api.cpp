#include <utility>

#include "absl/strings/str_format.h"
#include "iso/error.hpp"
#include "iso/fork.hpp"
#include "runtime/node_state.hpp"

namespace iso {

namespace detail {
void register_procedure(node& n, const std::string& name, procedure fn, std::uint64_t types,
                        std::size_t typed_bytes) {
  throw_if_error(node_state::of(n).forks().add(name, std::move(fn), types, typed_bytes));
}
}  // namespace detail

forked::forked(forked&& other) noexcept
    : node_(std::exchange(other.node_, nullptr)), target_(other.target_), id_(other.id_) {}

forked& forked::operator=(forked&& other) noexcept {
  if (this != &other) {
    if (node_ != nullptr) detail::node_state::of(*node_).forks().detach(id_);
    node_ = std::exchange(other.node_, nullptr);
    target_ = other.target_;
    id_ = other.id_;
  }
  return *this;
}

forked::~forked() {
  if (node_ != nullptr) detail::node_state::of(*node_).forks().detach(id_);
}

void forked::join() {
  if (node_ == nullptr) {
    throw iso::error(error_code::failed_precondition,
                     "join() on a forked handle that names no process (default-constructed, "
                     "moved from or joined already)");
  }
  node& n = *std::exchange(node_, nullptr);
  detail::throw_if_error(detail::node_state::of(n).forks().join(id_));
}

forked fork(node& n, node_id target, std::string_view name, std::span<const std::byte> arguments,
            std::uint64_t types) {
  forked out;
  out.id_ = detail::value_or_throw(
      detail::node_state::of(n).forks().fork(target, name, arguments, types));
  out.node_ = &n;
  out.target_ = target;
  return out;
}

std::size_t max_fork_arguments(node& n) {
  return detail::node_state::of(n).forks().max_arguments();
}

void run_main_on_first(node& n, const std::function<void()>& main) {
  runtime::fork_service& forks = detail::node_state::of(n).forks();
  n.barrier();  // every node has registered its procedures: forks may come
  if (n.id() == 0) {
    main();
    detail::throw_if_error(forks.stop_serving_everywhere());
  } else {
    detail::throw_if_error(forks.serve_until_stopped());
  }
  n.barrier();  // nobody stops serving while another may still fork to it
}

}  // namespace iso
