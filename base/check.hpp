// Checks of internal invariants. A failed ISO_CHECK is a bug in the project, never the
// result of bad user input (that gets an absl::Status): it logs the condition and the
// reason with its location, then calls iso::base::on_internal_error(), which throws
// iso::base::internal_error (tests make it abort so that the failure is loud).
//
//   ISO_CHECK(head <= tail) << "ring head " << head << " passed tail " << tail;
//   ISO_DCHECK(is_sorted(bucket));   // compiled only in debug builds
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace iso::base {

class internal_error : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Logs `what` as an error and throws internal_error, or aborts when abort-on-internal-error
// is set (tests set it so that a broken invariant fails loudly under a debugger).
[[noreturn]] void on_internal_error(const std::string& what);
void set_abort_on_internal_error(bool abort);

namespace detail {
// Collects the streamed reason; its destructor raises the error.
class check_failure {
 public:
  check_failure(const char* condition, const char* file, int line);
  check_failure(const check_failure&) = delete;
  check_failure& operator=(const check_failure&) = delete;
  [[noreturn]] ~check_failure() noexcept(false);
  template <typename T>
  check_failure& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }

 private:
  std::ostringstream stream_;
};
}  // namespace detail
}  // namespace iso::base

#define ISO_CHECK(cond) \
  if (cond) {           \
  } else                \
    ::iso::base::detail::check_failure(#cond, __FILE__, __LINE__)

#ifdef NDEBUG
#define ISO_DCHECK(cond) \
  if (true) {            \
  } else                 \
    ::iso::base::detail::check_failure(#cond, __FILE__, __LINE__)
#else
#define ISO_DCHECK(cond) ISO_CHECK(cond)
#endif
