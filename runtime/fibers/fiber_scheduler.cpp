#include "runtime/fibers/fiber_scheduler.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <utility>

#include "absl/strings/str_format.h"
#include "base/check.hpp"
#include "boost/context/protected_fixedsize_stack.hpp"
#include "iso/error.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define ISO_FIBERS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ISO_FIBERS_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define ISO_FIBERS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ISO_FIBERS_TSAN 1
#endif
#endif
#ifdef ISO_FIBERS_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef ISO_FIBERS_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace iso::runtime {
namespace {

using state = fiber_record::state;

// Fibers whose scheduler went before they ended. Their stacks stay mapped and their records
// alive for the life of the process: unwinding them would run destructors that expect the
// node they ran on.
void abandon(std::shared_ptr<fiber_record> f) {
  static std::mutex* const lock = new std::mutex;
  static auto* const kept = new std::vector<std::shared_ptr<fiber_record>>;
  const std::lock_guard<std::mutex> hold(*lock);
  kept->push_back(std::move(f));
}

// A guarded stack that notes where it lies in the fiber's record, for the sanitizers.
class noted_stack {
 public:
  noted_stack(std::size_t size, fiber_record& f) : inner_(size), fiber_(&f) {}
  boost::context::stack_context allocate() {
    boost::context::stack_context sc = inner_.allocate();
    fiber_->stack_bottom = static_cast<const char*>(sc.sp) - sc.size;
    fiber_->stack_size = sc.size;
    return sc;
  }
  void deallocate(boost::context::stack_context& sc) noexcept {
#ifdef ISO_FIBERS_ASAN
    // The frames that ran here left their redzones poisoned; memory mapped here later
    // would inherit them.
    __asan_unpoison_memory_region(static_cast<char*>(sc.sp) - sc.size, sc.size);
#endif
    inner_.deallocate(sc);
  }

 private:
  boost::context::protected_fixedsize_stack inner_;
  fiber_record* fiber_;  // only until allocate(): the stack outlives the record's use
};

const char* describe(state s) {
  switch (s) {
    case state::fresh:
      return "not started";
    case state::running:
      return "running";
    case state::ready:
      return "yielded";
    case state::waiting:
      return "waiting";
    case state::ended:
      return "ended";
  }
  return "?";
}

}  // namespace

fiber_scheduler::fiber_scheduler(event_loop& loop, std::uint32_t self)
    : loop_(loop), self_(self), main_(std::make_shared<fiber_record>()), current_(main_.get()) {
  main_->name = "main";
  main_->now = state::running;
#ifdef ISO_FIBERS_TSAN
  main_->tsan_fiber = __tsan_get_current_fiber();
#endif
  fibers_.push_back(main_);
  loop_.set_fiber_switch(this);
}

fiber_scheduler::~fiber_scheduler() {
  loop_.set_fiber_switch(nullptr);
  for (std::shared_ptr<fiber_record>& f : fibers_) {
    if (f != main_) abandon(std::move(f));
  }
}

std::shared_ptr<fiber_record> fiber_scheduler::spawn(std::string name, std::function<void()> body,
                                                     std::size_t stack_bytes) {
  auto f = std::make_shared<fiber_record>();
  f->name = std::move(name);
  f->body = std::move(body);
  fiber_record* raw = f.get();
  f->context = boost::context::fiber(std::allocator_arg, noted_stack(stack_bytes, *f),
                                     [this, raw](boost::context::fiber&& from) {
                                       (void)from;  // empty: switch_to() kept the caller's
                                       after_switch();
                                       return run(*raw);
                                     });
#ifdef ISO_FIBERS_TSAN
  f->tsan_fiber = __tsan_create_fiber(0);
#endif
  fibers_.push_back(f);
  return f;
}

bool fiber_scheduler::runnable(const fiber_record& f) const {
  switch (f.now) {
    case state::fresh:
    case state::ready:
      return true;
    case state::waiting:
      return !failure_.ok() || (*f.until)();
    case state::running:
    case state::ended:
      return false;
  }
  return false;
}

fiber_record* fiber_scheduler::pick() {
  const std::size_t n = fibers_.size();
  for (std::size_t k = 1; k <= n; ++k) {
    const std::size_t i = (turn_ + k) % n;
    if (runnable(*fibers_[i])) {
      turn_ = i;
      return fibers_[i].get();
    }
  }
  return nullptr;
}

void fiber_scheduler::switch_to(fiber_record& next) {
  fiber_record* self = current_;
  before_switch(next, false);
  current_ = &next;
  next.now = state::running;
  ++switches_;
  // The suspended fiber's continuation is kept by the fiber that resumes, on its stack,
  // before anything runs there; so every fiber is resumed the same way.
  boost::context::fiber back =
      std::move(next.context).resume_with([self](boost::context::fiber&& from) {
        self->context = std::move(from);
        return boost::context::fiber();
      });
  (void)back;  // empty: whoever resumed this fiber kept nothing in it
  after_switch();
}

void fiber_scheduler::before_switch(fiber_record& next, bool ending) {
  previous_ = ending ? nullptr : current_;  // an ended fiber's record may go at once
#ifdef ISO_FIBERS_ASAN
  __sanitizer_start_switch_fiber(ending ? nullptr : &current_->fake_stack, next.stack_bottom,
                                 next.stack_size);
#endif
#ifdef ISO_FIBERS_TSAN
  if (ending) ended_tsan_fiber_ = current_->tsan_fiber;
  __tsan_switch_to_fiber(next.tsan_fiber, 0);
#endif
  (void)next;
  (void)ending;
}

void fiber_scheduler::after_switch() {
#ifdef ISO_FIBERS_ASAN
  const void* from_bottom = nullptr;
  std::size_t from_size = 0;
  __sanitizer_finish_switch_fiber(current_->fake_stack, &from_bottom, &from_size);
  // Main's stack is the thread's: learnt the first time main is left.
  if (previous_ != nullptr && previous_->stack_bottom == nullptr) {
    previous_->stack_bottom = from_bottom;
    previous_->stack_size = from_size;
  }
#endif
#ifdef ISO_FIBERS_TSAN
  if (ended_tsan_fiber_ != nullptr) {
    __tsan_destroy_fiber(ended_tsan_fiber_);
    ended_tsan_fiber_ = nullptr;
  }
#endif
}

absl::Status fiber_scheduler::wait(absl::FunctionRef<bool()> done) {
  if (fibers_.size() == 1) {
    // No other fiber to run: rounds on this stack, until one is spawned meanwhile (a fork
    // that arrived, a message handler's).
    bool spawned = false;
    absl::Status s = loop_.wait_rounds([&] {
      if (done()) return true;
      spawned = fibers_.size() > 1;
      return spawned;
    });
    if (!s.ok() || !spawned) return s;
  } else if (done()) {
    return absl::OkStatus();
  }
  // `done` is not called again once it returned true: it may have acted (taken a message).
  // Fibers that keep each other runnable would otherwise never make a round: the node
  // must go on serving the others.
  if (absl::Status s = loop_.progress_now_and_then(); !s.ok()) return s;
  fiber_record& self = *current_;
  self.until = &done;
  self.now = state::waiting;
  fiber_record* next = pick();
  if (next == nullptr) {
    // Every fiber waits: this one makes the rounds (and sleeps) until one may go on.
    absl::Status s = loop_.wait_rounds([&] {
      next = pick();
      return next != nullptr;
    });
    if (!s.ok()) {
      if (failure_.ok()) failure_ = s;
      next = &self;  // it reports the failure first; the others when they run
    }
  }
  if (next != &self) switch_to(*next);
  // Running again: its condition held when it was picked, or the node failed.
  self.until = nullptr;
  self.now = state::running;
  if (!failure_.ok() && !done()) return failure_;
  return absl::OkStatus();
}

absl::Status fiber_scheduler::yield() {
  bool did = false;
  if (absl::Status s = loop_.progress(did); !s.ok()) return s;
  if (fibers_.size() == 1) return absl::OkStatus();
  fiber_record& self = *current_;
  self.now = state::ready;
  fiber_record* next = pick();  // this one last: it is ready
  if (next != nullptr && next != &self) switch_to(*next);
  self.now = state::running;
  return absl::OkStatus();
}

absl::Status fiber_scheduler::join(const fiber_record& f) {
  if (&f == current_) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "fiber '%s' on node %u joins itself: it would wait forever", f.name, self_));
  }
  if (absl::Status s = loop_.wait_for([&] { return f.now == state::ended; }); !s.ok()) return s;
  return f.outcome;
}

boost::context::fiber fiber_scheduler::run(fiber_record& f) {
  try {
    f.body();
  } catch (const boost::context::detail::forced_unwind&) {
    throw;  // Boost.Context unwinding a fiber's stack: not the program's exception
  } catch (const iso::error& e) {
    f.outcome = absl::Status(static_cast<absl::StatusCode>(e.code()),
                             absl::StrFormat("fiber '%s' on node %u ended with an exception: %s",
                                             f.name, self_, e.what()));
  } catch (const std::exception& e) {
    f.outcome = absl::AbortedError(absl::StrFormat(
        "fiber '%s' on node %u ended with an exception: %s", f.name, self_, e.what()));
  } catch (...) {
    f.outcome = absl::AbortedError(absl::StrFormat(
        "fiber '%s' on node %u ended with an exception that is not a std::exception", f.name,
        self_));
  }
  f.body = nullptr;  // what it captured goes now, on its own stack
  f.now = state::ended;
  if (!f.outcome.ok()) loop_.fail(f.outcome);
  const auto it =
      std::find_if(fibers_.begin(), fibers_.end(),
                   [&](const std::shared_ptr<fiber_record>& p) { return p.get() == &f; });
  ISO_CHECK(it != fibers_.end()) << "an ended fiber is not among the node's fibers";
  const std::shared_ptr<fiber_record> keep = *it;  // whoever holds a handle may keep it longer
  const auto index = static_cast<std::size_t>(it - fibers_.begin());
  fibers_.erase(it);
  if (index <= turn_ && turn_ > 0) --turn_;
  fiber_record& next = next_after_end();
  before_switch(next, true);
  current_ = &next;
  next.now = state::running;
  ++switches_;
#ifdef ISO_FIBERS_TSAN
  // ThreadSanitizer follows a stack switch only where it is told, and returning from here
  // would run this fiber's last frames after that point, on the next fiber's account: the
  // fiber parks for good instead, its stack kept with the abandoned ones.
  abandon(keep);
  fiber_record* const parked = &f;
  boost::context::fiber never =
      std::move(next.context).resume_with([parked](boost::context::fiber&& from) {
        parked->context = std::move(from);
        return boost::context::fiber();
      });
  ISO_CHECK(false) << "an ended fiber was resumed on node " << self_;
  return never;
#else
  return std::move(next.context);
#endif
}

fiber_record& fiber_scheduler::next_after_end() {
  fiber_record* next = pick();
  if (next == nullptr) {
    absl::Status s = loop_.wait_rounds([&] {
      next = pick();
      return next != nullptr;
    });
    if (!s.ok()) {
      if (failure_.ok()) failure_ = s;
      next = pick();  // every waiting fiber may run now, to see the failure
    }
  }
  // Main never ends while other fibers exist, and it runs, yields or waits.
  ISO_CHECK(next != nullptr) << "no fiber left to run on node " << self_;
  return *next;
}

absl::Status fiber_scheduler::check_all_ended(const char* when) const {
  if (live() == 0) return absl::OkStatus();
  std::string names;
  for (const std::shared_ptr<fiber_record>& f : fibers_) {
    if (f == main_) continue;
    absl::StrAppendFormat(&names, "%s'%s' (%s)", names.empty() ? "" : ", ", f->name,
                          describe(f->now));
  }
  return absl::FailedPreconditionError(
      absl::StrFormat("node %u: %s while %u fiber(s) still run: %s; join every fiber first", self_,
                      when, live(), names));
}

}  // namespace iso::runtime
