#include "base/check.hpp"

#include <atomic>
#include <cstdlib>

#include "base/log.hpp"

namespace iso::base {
namespace {
std::atomic<bool> g_abort{false};
}

void set_abort_on_internal_error(bool abort) { g_abort.store(abort); }

void on_internal_error(const std::string& what) {
  ISO_LOG(base, error, "internal error: %s", what);
  if (g_abort.load()) std::abort();
  throw internal_error(what);
}

namespace detail {
check_failure::check_failure(const char* condition, const char* file, int line) {
  stream_ << file << ":" << line << ": check failed: " << condition << ": ";
}

// Throwing is the point: a failed check ends in on_internal_error, which throws (or aborts
// in tests).
// NOLINTNEXTLINE(bugprone-exception-escape)
check_failure::~check_failure() noexcept(false) { on_internal_error(stream_.str()); }
}  // namespace detail
}  // namespace iso::base
