#include "runtime/smm/copy_window.hpp"

#include <cstdint>

#include "base/atomic_max.hpp"
#include "base/check.hpp"

namespace iso::runtime {

namespace {

constexpr std::size_t kHeaderBytes = sizeof(window_header);

std::uint32_t pages_fitting(std::size_t bytes, std::uint32_t page_variables) {
  if (bytes <= kHeaderBytes) return 0;
  return static_cast<std::uint32_t>((bytes - kHeaderBytes) /
                                    (std::size_t{page_variables} * sizeof(shared_variable)));
}

}  // namespace

window_map::window_map(std::span<std::byte> memory, std::uint32_t page_variables)
    : page_variables_(page_variables) {
  if (memory.size() <= kHeaderBytes) return;
  // Windows lie at page boundaries of their segment; the doorbell wants its own line.
  ISO_CHECK(reinterpret_cast<std::uintptr_t>(memory.data()) % alignof(window_header) == 0)
      << "a memory window must start at a cache line";
  // The segment is zero-filled: a fresh window reads as sequence 0, through 0, no pages.
  header_ = reinterpret_cast<window_header*>(memory.data());
  pages_ = reinterpret_cast<shared_variable*>(memory.data() + kHeaderBytes);
  capacity_ = pages_fitting(memory.size(), page_variables);
}

void copy_window::begin_change() {
  if (header_ == nullptr || changing_) return;
  changing_ = true;
  // seq_cst store, then seq_cst load: a reader that raised `step` and then found the lock
  // word unchanged is seen here (window_reader::raise_step). The release fence keeps the
  // changes that follow after the odd lock word for a reader's acquire fence.
  header_->sequence.store(++sequence_, std::memory_order_seq_cst);
  step_ = header_->step.load(std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_release);
}

std::uint64_t copy_window::change_step(std::uint64_t least) {
  if (header_ == nullptr) return least;
  ISO_CHECK(changing_) << "a change step outside a change section";
  if (least > step_) {
    step_ = least;
    base::raise_to(header_->step, least, std::memory_order_seq_cst);
  }
  return step_;
}

void copy_window::end_change() {
  if (!changing_) return;
  changing_ = false;
  // seq_cst pairs with the readers' seq_cst load (see window_reader::snapshot).
  header_->sequence.store(++sequence_, std::memory_order_seq_cst);
  if (owes_ring_) {
    owes_ring_ = false;
    header_->advanced.ring();
  }
}

void copy_window::publish_through(std::uint64_t pulse) {
  if (header_ == nullptr) return;
  header_->through.store(pulse, std::memory_order_release);
  // A fence and a load, unless a reader sleeps. Not inside a change section: a reader woken
  // there would only find the owner changing.
  if (changing_) {
    owes_ring_ = true;
  } else {
    header_->advanced.ring();
  }
}

void copy_window::publish_next_local(std::uint64_t rank) {
  if (header_ != nullptr) header_->next_local.store(rank, std::memory_order_relaxed);
}

void window_reader::want(std::uint64_t through) const {
  base::raise_to(header_->wanted, through, std::memory_order_relaxed);
}

void window_reader::raise_step(std::uint64_t step) const {
  // seq_cst load and exchange, before snapshot()'s seq_cst load of the lock word.
  std::uint64_t seen = header_->step.load(std::memory_order_seq_cst);
  while (seen < step &&
         !header_->step.compare_exchange_weak(seen, step, std::memory_order_seq_cst)) {
  }
}

void window_reader::wait_past(std::uint64_t through, absl::Duration timeout,
                              absl::FunctionRef<bool()> may_sleep) const {
  comm::doorbell& bell = header_->advanced;
  const std::uint32_t ticket = bell.prepare_sleep();
  // After announcing the sleep: an owner that moved on before it is seen here, one that
  // moves on after it sees the sleeper and rings.
  // seq_cst: what may_sleep() loads must not be read before the sleep was announced.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (header_->through.load(std::memory_order_seq_cst) == through && may_sleep()) {
    bell.sleep(ticket, timeout);
  }
  bell.finish_sleep();
}

}  // namespace iso::runtime
