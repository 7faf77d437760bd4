#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "iso/error.hpp"
#include "iso/fork.hpp"
#include "iso/object.hpp"
#include "runtime/fork/fork_service.hpp"
#include "runtime/node_state.hpp"

namespace iso {

namespace detail {
void register_procedure(node& n, const std::string& name, procedure fn, std::uint64_t types,
                        std::size_t typed_bytes) {
  runtime::fork_service::body body = [fn = std::move(fn)](node& self,
                                                          std::span<const std::byte> arguments,
                                                          std::span<const std::uint64_t> objects) {
    (void)objects;  // it takes none: the target refused a fork that handed some
    fn(self, arguments);
  };
  throw_if_error(node_state::of(n).forks().add(name, std::move(body), types, typed_bytes,
                                               /*takes_objects=*/false));
}

void register_procedure(node& n, const std::string& name, object_procedure fn, std::uint64_t types,
                        std::size_t typed_bytes) {
  runtime::fork_service::body body = [fn = std::move(fn)](node& self,
                                                          std::span<const std::byte> arguments,
                                                          std::span<const std::uint64_t> ids) {
    // Attached already (the fork was accepted only then): no wait here.
    std::vector<object> objects;
    objects.reserve(ids.size());
    for (const std::uint64_t id : ids) objects.push_back(object::attach(self, id));
    fn(self, objects, arguments);
  };
  throw_if_error(node_state::of(n).forks().add(name, std::move(body), types, typed_bytes,
                                               /*takes_objects=*/true));
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

forked fork(node& n, node_id target, std::string_view name, const std::vector<object>& objects,
            std::span<const std::byte> arguments, std::uint64_t types) {
  detail::node_state& self = detail::node_state::of(n);
  std::vector<std::uint64_t> ids;
  ids.reserve(objects.size());
  for (const object& o : objects) {
    const detail::node_state* owner = detail::node_of(o);
    if (owner == nullptr) {
      throw error(error_code::failed_precondition,
                  absl::StrFormat("fork of '%s' to node %u: shared object %u: its node has ended "
                                  "(a handle of a job that is over)",
                                  name, target, o.id()));
    }
    if (owner != &self) {
      throw error(error_code::failed_precondition,
                  absl::StrFormat("fork of '%s' to node %u: shared object %u is a handle of node "
                                  "%u; node %u hands only its own handles (object::attach first)",
                                  name, target, o.id(), owner->id(), self.id()));
    }
    ids.push_back(o.id());
  }
  forked out;
  out.id_ = detail::value_or_throw(self.forks().fork(target, name, arguments, types, ids));
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
