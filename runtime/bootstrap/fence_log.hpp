// The fences a process has started and how each ended, for asking later "did fence n pass?"
// from any thread while the launcher's library completes them on its own thread. Fences
// that completed are forgotten as new ones start (the log stays small however many a job
// makes), but a fence that failed is remembered as failed for good: asking about it later
// never reads as passed.
//
//   fence_log log;
//   auto [number, record] = log.begin();     // record->finish(status) when it completes
//   ...
//   if (log.look_up(number).state == fence_log::fence_state::failed) ...
//
// Statuses are the launcher's own codes; `kSucceeded` (0) is success, anything else failure.
// Thread safety: all members may be called from any thread; a record's finish() too.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "absl/base/thread_annotations.h"

namespace iso::runtime {

class fence_log {
 public:
  static constexpr int kSucceeded = 0;

  // Where the completion of one fence is written; stays valid until that fence finished and
  // a later fence began.
  class record {
   public:
    void finish(int status) {
      status_.store(status, std::memory_order_relaxed);
      done_.store(true, std::memory_order_release);
    }
    [[nodiscard]] bool done() const { return done_.load(std::memory_order_acquire); }
    [[nodiscard]] int status() const { return status_.load(std::memory_order_relaxed); }

   private:
    std::atomic<bool> done_{false};
    std::atomic<int> status_{kSucceeded};
  };

  enum class fence_state { unknown, running, passed, failed };
  struct outcome {
    fence_state state = fence_state::unknown;
    int status = kSucceeded;  // the failure's code when failed
  };

  // A new fence: its number (1, 2, ...) and the record its completion goes to.
  [[nodiscard]] std::pair<std::uint64_t, record*> begin();
  // How fence `number` stands: unknown for a number not yet begun.
  [[nodiscard]] outcome look_up(std::uint64_t number) const;

 private:
  mutable std::mutex mutex_;
  std::deque<std::unique_ptr<record>> records_ ABSL_GUARDED_BY(mutex_);  // first_ onwards
  std::uint64_t first_ ABSL_GUARDED_BY(mutex_) = 1;
  std::uint64_t next_ ABSL_GUARDED_BY(mutex_) = 1;
  // Failed fences already dropped from records_, by number.
  std::map<std::uint64_t, int> failed_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace iso::runtime
