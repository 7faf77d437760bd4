#include "comm/byte_ring.hpp"

#include <algorithm>
#include <cstring>

#include "base/check.hpp"

namespace iso::comm {
namespace {

constexpr std::uint64_t kHeaderBytes = 8;
constexpr std::uint64_t kValidBit = std::uint64_t{1} << 63;
constexpr std::uint64_t kWrapBit = std::uint64_t{1} << 62;
constexpr std::uint64_t kLengthMask = (std::uint64_t{1} << 32) - 1;

constexpr std::uint64_t record_bytes(std::uint64_t payload) {
  return (kHeaderBytes + payload + 7) & ~std::uint64_t{7};
}

std::atomic_ref<std::uint64_t> header_at(std::byte* data, std::uint64_t offset) {
  return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(data + offset));
}

std::atomic<std::uint64_t>* release_word(std::byte* memory, std::size_t capacity) {
  return reinterpret_cast<std::atomic<std::uint64_t>*>(memory + capacity);
}

}  // namespace

ring_producer::ring_producer(std::byte* memory, std::size_t capacity)
    : data_(memory),
      released_(release_word(memory, capacity)),
      capacity_(capacity),
      mask_(capacity - 1) {
  ISO_CHECK(capacity >= 256 && (capacity & (capacity - 1)) == 0)
      << "ring capacity " << capacity << " is not a power of two >= 256";
}

bool ring_producer::has_room(std::size_t bytes) {
  // The next header slot must also be free: it is zeroed before publication.
  if (tail_ + bytes + kHeaderBytes <= cached_head_ + capacity_) return true;
  cached_head_ = released_->load(std::memory_order_acquire);
  return tail_ + bytes + kHeaderBytes <= cached_head_ + capacity_;
}

std::size_t ring_producer::free_bytes_hint() const {
  const std::uint64_t used = tail_ - cached_head_ + kHeaderBytes;
  return used >= capacity_ ? 0 : capacity_ - used;
}

bool ring_producer::try_push(std::span<const byte_span> pieces, std::size_t size) {
  return push(pieces, size, false);
}

bool ring_producer::try_push_held(std::span<const byte_span> pieces, std::size_t size) {
  ISO_DCHECK(held_payload_ == nullptr) << "a record is already held";
  return push(pieces, size, true);
}

void ring_producer::publish_held() {
  if (held_payload_ == nullptr) return;
  header_at(data_, held_offset_).store(held_word_, std::memory_order_release);
  held_payload_ = nullptr;
}

bool ring_producer::push(std::span<const byte_span> pieces, std::size_t size, bool hold) {
  ISO_DCHECK(size <= byte_ring_max_payload(capacity_)) << "payload of " << size << " bytes";
  const std::uint64_t bytes = record_bytes(size);
  const std::uint64_t offset = tail_ & mask_;
  const std::uint64_t until_end = capacity_ - offset;
  const bool wraps = bytes > until_end;
  if (!has_room(wraps ? until_end + bytes : bytes)) return false;

  const std::uint64_t record_offset = wraps ? 0 : offset;
  std::byte* out = data_ + record_offset + kHeaderBytes;
  for (const byte_span& piece : pieces) {
    if (piece.empty()) continue;  // an empty span may carry a null pointer
    std::memcpy(out, piece.data(), piece.size());
    out += piece.size();
  }
  // Zero the next header slot before anything that makes this record visible.
  header_at(data_, (record_offset + bytes) & mask_).store(0, std::memory_order_relaxed);
  // The consumer reads the wrap marker first (published last, so a consumer that follows
  // it finds the record complete), else the record's header.
  const std::uint64_t first_word = wraps ? kValidBit | kWrapBit : kValidBit | size;
  if (wraps) header_at(data_, record_offset).store(kValidBit | size, std::memory_order_release);
  if (hold) {
    held_payload_ = data_ + record_offset + kHeaderBytes;
    held_offset_ = offset;
    held_word_ = first_word;
  } else {
    header_at(data_, offset).store(first_word, std::memory_order_release);
  }
  if (wraps) tail_ += until_end;
  tail_ += bytes;
  return true;
}

ring_consumer::ring_consumer(std::byte* memory, std::size_t capacity)
    : data_(memory),
      released_(release_word(memory, capacity)),
      capacity_(capacity),
      mask_(capacity - 1) {}

ring_consumer::peek_result ring_consumer::peek(ring_record& out) {
  std::uint64_t offset = read_ & mask_;
  std::uint64_t header = header_at(data_, offset).load(std::memory_order_acquire);
  if (header == 0) return peek_result::empty;
  std::uint64_t begin = read_;
  if (header & kWrapBit) {
    begin += capacity_ - offset;
    offset = 0;
    header = header_at(data_, 0).load(std::memory_order_acquire);
    if ((header & kValidBit) == 0 || (header & kWrapBit)) return peek_result::corrupt;
  }
  const std::uint64_t length = header & kLengthMask;
  if ((header & kValidBit) == 0 || length > byte_ring_max_payload(capacity_)) {
    return peek_result::corrupt;
  }
  out.begin = read_;
  out.end = begin + record_bytes(length);
  out.payload = {data_ + offset + kHeaderBytes, length};
  return peek_result::record;
}

void ring_consumer::release_to(std::uint64_t position) {
  released_->store(position, std::memory_order_release);
}

bool ring_consumer::has_pending() const {
  return header_at(data_, read_ & mask_).load(std::memory_order_acquire) != 0;
}

void ordered_release::handled(ring_consumer& ring, std::uint64_t end, bool keep) {
  if (keep || !records_.empty()) {
    records_.push_back({end, !keep});
  } else {
    ring.release_to(end);
  }
}

bool ordered_release::release(ring_consumer& ring, std::uint64_t end) {
  auto it = std::find_if(records_.begin(), records_.end(),
                         [end](const record& r) { return r.end == end; });
  if (it == records_.end() || it->released) return false;
  it->released = true;
  std::uint64_t release_to = 0;
  while (!records_.empty() && records_.front().released) {
    release_to = records_.front().end;
    records_.pop_front();
  }
  if (release_to != 0) ring.release_to(release_to);
  return true;
}

}  // namespace iso::comm
