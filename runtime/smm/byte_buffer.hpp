// A growable byte buffer that appends without first zero-filling (std::vector<std::byte>
// value-initialises on resize, which showed up as a fifth of a local isochron's cost).
// Capacity is kept across clear(), so a buffer reused per isochron stops allocating.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <span>
#include <utility>

namespace iso::runtime {

class byte_buffer {
 public:
  byte_buffer() = default;
  // A moved-from buffer is empty and has no storage.
  byte_buffer(byte_buffer&& other) noexcept
      : data_(std::move(other.data_)),
        size_(std::exchange(other.size_, 0)),
        capacity_(std::exchange(other.capacity_, 0)) {}
  byte_buffer& operator=(byte_buffer&& other) noexcept {
    data_ = std::move(other.data_);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
    return *this;
  }

  void append(const void* bytes, std::size_t n) {
    if (size_ + n > capacity_) grow(size_ + n);
    if (n != 0) std::memcpy(data_.get() + size_, bytes, n);
    size_ += n;
  }
  void append_zeros(std::size_t n) {
    if (size_ + n > capacity_) grow(size_ + n);
    if (n != 0) std::memset(data_.get() + size_, 0, n);
    size_ += n;
  }
  void clear() { size_ = 0; }
  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] std::size_t capacity() const { return capacity_; }
  [[nodiscard]] std::span<const std::byte> bytes() const { return {data_.get(), size_}; }

 private:
  void grow(std::size_t needed) {
    std::size_t capacity = capacity_ == 0 ? 256 : capacity_;
    while (capacity < needed) capacity *= 2;
    std::unique_ptr<std::byte[]> bigger(new std::byte[capacity]);  // not initialised
    if (size_ != 0) std::memcpy(bigger.get(), data_.get(), size_);
    data_ = std::move(bigger);
    capacity_ = capacity;
  }

  std::unique_ptr<std::byte[]> data_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace iso::runtime
