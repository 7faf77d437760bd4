// Zeroed memory for a node's memory window in unit tests, aligned as a window is in its
// segment (a page boundary): runtime/smm/copy_window.hpp wants its header on cache lines.
//
//   const iso::test::window_memory memory(bytes);
//   copy_window window(memory.span(), page_variables);
#pragma once

#include <cstddef>
#include <cstring>
#include <new>
#include <span>

namespace iso::test {

class window_memory {
 public:
  explicit window_memory(std::size_t bytes)
      : bytes_(static_cast<std::byte*>(::operator new(bytes, kAlign))), size_(bytes) {
    std::memset(bytes_, 0, bytes);
  }
  window_memory(const window_memory&) = delete;
  window_memory& operator=(const window_memory&) = delete;
  ~window_memory() { ::operator delete(bytes_, kAlign); }

  [[nodiscard]] std::span<std::byte> span() const { return {bytes_, size_}; }
  [[nodiscard]] std::byte* data() const { return bytes_; }
  [[nodiscard]] std::size_t size() const { return size_; }

 private:
  static constexpr std::align_val_t kAlign{4096};
  std::byte* bytes_;
  std::size_t size_;
};

}  // namespace iso::test
