// Restricts the calling process (and what it starts) to the first core it may use, for a
// scope: the tests of oversubscribed jobs make one with as many nodes as they like.
#pragma once

#include <sched.h>

namespace iso::test {

class one_core {
 public:
  one_core() {
    if (::sched_getaffinity(0, sizeof(saved_), &saved_) != 0) return;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (!CPU_ISSET(cpu, &saved_)) continue;
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      pinned_ = ::sched_setaffinity(0, sizeof(one), &one) == 0;
      return;
    }
  }
  ~one_core() {
    if (pinned_) ::sched_setaffinity(0, sizeof(saved_), &saved_);
  }
  one_core(const one_core&) = delete;
  one_core& operator=(const one_core&) = delete;
  // Whether the process runs on one core now.
  [[nodiscard]] bool pinned() const { return pinned_; }

 private:
  cpu_set_t saved_{};
  bool pinned_ = false;
};

}  // namespace iso::test
