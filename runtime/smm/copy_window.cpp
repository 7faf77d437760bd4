#include "runtime/smm/copy_window.hpp"

namespace iso::runtime {

namespace {

constexpr std::size_t kHeaderBytes = 64;

std::uint32_t pages_fitting(std::size_t bytes, std::uint32_t page_variables) {
  if (bytes <= kHeaderBytes) return 0;
  return static_cast<std::uint32_t>((bytes - kHeaderBytes) /
                                    (std::size_t{page_variables} * sizeof(shared_variable)));
}

}  // namespace

window_map::window_map(std::span<std::byte> memory, std::uint32_t page_variables)
    : page_variables_(page_variables) {
  if (memory.size() <= kHeaderBytes) return;
  // The segment is zero-filled: a fresh window reads as sequence 0, through 0, no pages.
  header_ = reinterpret_cast<window_header*>(memory.data());
  pages_ = reinterpret_cast<shared_variable*>(memory.data() + kHeaderBytes);
  capacity_ = pages_fitting(memory.size(), page_variables);
}

void copy_window::begin_change() {
  if (header_ == nullptr || changing_) return;
  changing_ = true;
  header_->sequence.store(++sequence_, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
}

void copy_window::end_change() {
  if (!changing_) return;
  changing_ = false;
  // seq_cst pairs with the readers' seq_cst load (see window_reader::snapshot).
  header_->sequence.store(++sequence_, std::memory_order_seq_cst);
}

void copy_window::publish_through(std::uint64_t pulse) {
  if (header_ != nullptr) header_->through.store(pulse, std::memory_order_release);
}

void copy_window::publish_next_local(std::uint64_t rank) {
  if (header_ != nullptr) header_->next_local.store(rank, std::memory_order_relaxed);
}

}  // namespace iso::runtime
