#include "comm/doorbell.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <ctime>

namespace iso::comm {
namespace {

long futex(std::atomic<std::uint32_t>* word, int op, std::uint32_t value, const timespec* timeout) {
  // Not FUTEX_PRIVATE_FLAG: the word may be in memory shared between processes.
  return ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), op, value, timeout, nullptr,
                   0);
}

}  // namespace

std::uint32_t doorbell::prepare_sleep() {
  const std::uint32_t ticket = sequence.load(std::memory_order_acquire);
  sleepers.fetch_add(1, std::memory_order_seq_cst);
  return ticket;
}

void doorbell::sleep(std::uint32_t ticket, absl::Duration timeout) {
  const timespec relative = absl::ToTimespec(timeout);
  futex(&sequence, FUTEX_WAIT, ticket, &relative);
}

void doorbell::finish_sleep() { sleepers.fetch_sub(1, std::memory_order_relaxed); }

void doorbell::ring() {
  // Orders the sender's publication before its read of `sleepers`; pairs with the seq_cst
  // increment in prepare_sleep(), so either the sender sees the sleeper or the sleeper sees
  // the packet.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (sleepers.load(std::memory_order_relaxed) == 0) return;
  sequence.fetch_add(1, std::memory_order_release);
  futex(&sequence, FUTEX_WAKE, INT_MAX, nullptr);
}

}  // namespace iso::comm
