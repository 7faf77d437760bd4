// Raising an atomic to at least a value (a monotonic mark several threads or processes may
// push up at once): never lowers it, and a lost race simply sees the larger value.
//
//   raise_to(mark, value, std::memory_order_release);
#pragma once

#include <atomic>

namespace iso::base {

// Makes `word` at least `value`. `order` is the order of the store that raises it (the
// compare-exchange's failure order is derived from it, as the standard's one-order form does);
// nothing is stored when `word` already holds `value` or more.
template <typename T>
void raise_to(std::atomic<T>& word, T value, std::memory_order order) {
  T seen = word.load(std::memory_order_relaxed);
  while (seen < value && !word.compare_exchange_weak(seen, value, order)) {
  }
}

}  // namespace iso::base
