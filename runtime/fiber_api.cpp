#include <new>
#include <utility>

#include "absl/strings/str_format.h"
#include "iso/error.hpp"
#include "iso/fiber.hpp"
#include "runtime/node_state.hpp"

namespace iso {
namespace {

constexpr std::size_t kSmallestStack = 16 * 1024;
// Far above what a machine maps, far below where the stack's rounding up to whole pages with
// a guard page wraps around to a tiny stack.
constexpr std::size_t kLargestStack = std::size_t{1} << 40;

// join() and yield() run other fibers, which may wait for the caller's open isochron.
void refuse_inside_own_isochron(detail::node_state& state, const char* what) {
  if (!state.own_isochron_open()) return;
  throw iso::error(error_code::failed_precondition,
                   absl::StrFormat("%s inside an open isochron on node %u: other fibers may wait "
                                   "for it; end the isochron first",
                                   what, state.id()));
}

}  // namespace

fiber::fiber() = default;
fiber::fiber(fiber&&) noexcept = default;
fiber& fiber::operator=(fiber&&) noexcept = default;
fiber::~fiber() = default;

fiber::fiber(node& n, std::shared_ptr<runtime::fiber_record> record)
    : node_(&n), record_(std::move(record)) {}

bool fiber::joinable() const { return record_ != nullptr; }

bool fiber::done() const {
  return record_ != nullptr && record_->now == runtime::fiber_record::state::ended;
}

void fiber::join() {
  if (record_ == nullptr) {
    throw iso::error(error_code::failed_precondition,
                     "join() on a fiber handle that names no fiber (default-constructed, moved "
                     "from or joined already)");
  }
  detail::node_state& state = detail::node_state::of(*node_);
  refuse_inside_own_isochron(state, "join()");
  const absl::Status outcome = state.fibers().join(*record_);
  // A fiber that joins itself may try again later from another; any other outcome is final.
  if (outcome.code() != absl::StatusCode::kFailedPrecondition || done()) record_.reset();
  detail::throw_if_error(outcome);
}

fiber spawn(node& n, std::function<void()> body, fiber_options opts) {
  if (opts.stack_bytes < kSmallestStack) {
    throw iso::error(error_code::invalid_argument,
                     absl::StrFormat("fiber '%s' with a stack of %u bytes: at least %u needed",
                                     opts.name, opts.stack_bytes, kSmallestStack));
  }
  if (opts.stack_bytes > kLargestStack) {
    throw iso::error(error_code::invalid_argument,
                     absl::StrFormat("fiber '%s' with a stack of %u bytes: at most %u allowed",
                                     opts.name, opts.stack_bytes, kLargestStack));
  }
  if (!body) {
    throw iso::error(error_code::invalid_argument,
                     absl::StrFormat("fiber '%s' with an empty body", opts.name));
  }
  detail::node_state& state = detail::node_state::of(n);
  try {
    return fiber(n, state.fibers().spawn(std::move(opts.name), std::move(body), opts.stack_bytes));
  } catch (const std::bad_alloc&) {
    throw iso::error(error_code::resource_exhausted,
                     absl::StrFormat("no memory for a fiber stack of %u bytes on node %u",
                                     opts.stack_bytes, n.id()));
  }
}

void yield(node& n) {
  detail::node_state& state = detail::node_state::of(n);
  refuse_inside_own_isochron(state, "yield()");
  detail::throw_if_error(state.fibers().yield());
}

std::size_t live_fibers(node& n) { return detail::node_state::of(n).fibers().live(); }

}  // namespace iso
