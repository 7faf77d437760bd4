// Many fibers on one node's thread. A fiber runs until it waits (any event_loop::wait_for:
// a read's value, a message, a barrier, a join) or yields; then the next runnable fiber
// runs, in turn. Once every fiber waits, the waiting fiber makes the loop's rounds, with
// its waiter policy (polls, then sleeps on the NIC), until one of them may run again.
// The node's own thread is the first fiber ("main").
//
//   fiber_scheduler fibers(loop, node_id);   // installs itself as the loop's fiber switch
//   std::shared_ptr<fiber_record> f = fibers.spawn("worker", [&] { ... });
//   ISO_RETURN_IF_ERROR(fibers.join(*f));
//
// Scheduling is cooperative and on one thread: a fiber that never waits never lets another
// run. An exception that leaves a fiber fails the node, with an error naming the fiber.
// Fibers that have not ended when the scheduler goes are abandoned: their stacks are not
// unwound (destructors on them could wait for a node that is gone).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "boost/context/fiber.hpp"
#include "runtime/progress/event_loop.hpp"

namespace iso::runtime {

// One fiber. Shared by the scheduler (until the fiber ends) and whoever holds its handle.
struct fiber_record {
  enum class state : std::uint8_t { fresh, running, ready, waiting, ended };

  std::string name;
  std::function<void()> body;
  boost::context::fiber context;                     // while it does not run (none once ended)
  const absl::FunctionRef<bool()>* until = nullptr;  // while waiting: when it may go on
  state now = state::fresh;
  absl::Status outcome;  // once ended: OK, or what left it as an exception
  // For the sanitizers, which must be told of every stack switch (sanitizer builds only).
  const void* stack_bottom = nullptr;
  std::size_t stack_size = 0;
  void* fake_stack = nullptr;  // AddressSanitizer's, while suspended
  void* tsan_fiber = nullptr;  // ThreadSanitizer's
};

class fiber_scheduler final : public fiber_switch {
 public:
  // The default stack of a fiber (guard page below it; pages are committed when touched).
  static constexpr std::size_t kDefaultStack = 256 * 1024;

  // Installs itself as `loop`'s fiber switch; `self` names the node in errors.
  fiber_scheduler(event_loop& loop, std::uint32_t self);
  // Abandons fibers that have not ended (see above).
  ~fiber_scheduler() override;
  fiber_scheduler(const fiber_scheduler&) = delete;
  fiber_scheduler& operator=(const fiber_scheduler&) = delete;

  // A new fiber that will run `body` once the running one waits or yields. Cheap: nothing
  // runs yet. May be called from a delivery unit's callback.
  std::shared_ptr<fiber_record> spawn(std::string name, std::function<void()> body,
                                      std::size_t stack_bytes = kDefaultStack);
  // Waits until `f` has ended; its outcome.
  [[nodiscard]] absl::Status join(const fiber_record& f);
  // Lets every other runnable fiber run once, with a round of progress.
  [[nodiscard]] absl::Status yield();

  // fiber_switch: suspends the running fiber until `done()`, which is not called again
  // once it returned true (on whichever fiber's stack it ran).
  [[nodiscard]] absl::Status wait(absl::FunctionRef<bool()> done) override;

  [[nodiscard]] const fiber_record& current() const { return *current_; }
  [[nodiscard]] bool in_main() const { return current_ == main_.get(); }
  // Fibers spawned that have not ended.
  [[nodiscard]] std::size_t live() const { return fibers_.size() - 1; }
  [[nodiscard]] bool has_spawned_fibers() const override { return live() != 0; }
  // OK when no spawned fiber is left; else FailedPrecondition naming them and `when`.
  [[nodiscard]] absl::Status check_all_ended(const char* when) const;
  // Context switches so far.
  [[nodiscard]] std::uint64_t switches() const { return switches_; }

 private:
  // The next fiber that may run, in turn after the last one picked (the running one last);
  // null if none.
  fiber_record* pick();
  [[nodiscard]] bool runnable(const fiber_record& f) const;
  void switch_to(fiber_record& next);
  // Runs a new fiber's body; returns the fiber to resume once it ended.
  boost::context::fiber run(fiber_record& f);
  // The fiber to run once `ending` (no longer among fibers_) is done: waits for one.
  fiber_record& next_after_end();
  // Sanitizer builds: tell the sanitizers of a switch from current_ to `next` (`ending`: the
  // current fiber will never run again), and, once on the new stack, that it happened.
  void before_switch(fiber_record& next, bool ending);
  void after_switch();

  event_loop& loop_;
  std::uint32_t self_;
  std::shared_ptr<fiber_record> main_;
  std::vector<std::shared_ptr<fiber_record>> fibers_;  // main first; ended ones leave
  fiber_record* current_;
  std::size_t turn_ = 0;  // index in fibers_ of the last one picked
  // Set once a wait failed (the node or the job failed): every waiting fiber then runs, and
  // its wait returns this.
  absl::Status failure_;
  std::uint64_t switches_ = 0;
  fiber_record* previous_ = nullptr;  // sanitizer builds: the fiber switched away from
  void* ended_tsan_fiber_ = nullptr;  // ThreadSanitizer's fiber of one that just ended
};

}  // namespace iso::runtime
