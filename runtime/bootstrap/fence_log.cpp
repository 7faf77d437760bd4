#include "runtime/bootstrap/fence_log.hpp"

namespace iso::runtime {

std::pair<std::uint64_t, fence_log::record*> fence_log::begin() {
  std::lock_guard lock(mutex_);
  // Completed fences before the last are dropped; a failure among them is kept apart.
  while (records_.size() > 1 && records_.front()->done()) {
    if (const int status = records_.front()->status(); status != kSucceeded) {
      failed_.emplace(first_, status);
    }
    records_.pop_front();
    ++first_;
  }
  records_.push_back(std::make_unique<record>());
  return {next_++, records_.back().get()};
}

fence_log::outcome fence_log::look_up(std::uint64_t number) const {
  std::lock_guard lock(mutex_);
  if (number == 0 || number >= next_) return {};
  if (number < first_) {
    auto failed = failed_.find(number);
    if (failed != failed_.end()) return {fence_state::failed, failed->second};
    return {fence_state::passed, kSucceeded};
  }
  const record& r = *records_[number - first_];
  if (!r.done()) return {fence_state::running, kSucceeded};
  if (r.status() != kSucceeded) return {fence_state::failed, r.status()};
  return {fence_state::passed, kSucceeded};
}

}  // namespace iso::runtime
