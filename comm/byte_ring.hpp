// A single-producer single-consumer ring of variable-length records in memory that both
// sides can map (the same process or a shared-memory segment).
//
// Layout: `capacity` bytes of record space (a power of two) plus one cache line holding the
// consumer's release position. Each record is an 8-byte header followed by the payload,
// padded to 8 bytes. The header word is the only thing the consumer polls: a zero header
// means "nothing yet", so an empty poll touches one cache line and a small record is usually
// in the line that was polled.
//
// Why stale bytes are never mistaken for a header: before publishing a record the producer
// zeroes the header slot of the *next* record, so the consumer, which reads headers only at
// positions it reached by consuming records, always finds either zero or a header published
// after that zero. A record that would cross the end of the space is preceded by a wrap
// marker and placed at offset 0.
//
// No locks and no system calls. The producer learns of freed space from the release position
// only when its cached copy says the ring is full, so in steady state the two sides share
// just the lines that carry records.
//
//   ring_producer p(memory, capacity);    ring_consumer c(memory, capacity);
//   p.try_push(pieces, total);             ring_record r;
//                                          if (c.peek(r) == record) { c.advance(r); use(r);
//                                                                     c.release_to(r.end); }
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>

namespace iso::comm {

// The bytes a ring occupies for a given record-space capacity.
constexpr std::size_t byte_ring_footprint(std::size_t capacity) { return capacity + 64; }

// Largest payload a ring of `capacity` bytes accepts: a quarter of the space, so that
// several maximal records can be in flight at once.
constexpr std::size_t byte_ring_max_payload(std::size_t capacity) { return capacity / 4 - 16; }

using byte_span = std::span<const std::byte>;

// A record found by the consumer. `begin` and `end` are positions in the ring's unbounded
// position space; `end` is what release_to() takes to free it and everything before it.
struct ring_record {
  std::uint64_t begin;
  std::uint64_t end;
  std::span<const std::byte> payload;
};

class ring_producer {
 public:
  // `memory` must be zeroed before either side first uses it, 8-byte aligned and
  // byte_ring_footprint(capacity) long; `capacity` is a power of two >= 256.
  ring_producer(std::byte* memory, std::size_t capacity);

  // Appends one record made of `pieces` (total bytes `size`), copied once. Returns false when
  // there is no room yet; the caller retries after the consumer releases space. The payload
  // must be at most byte_ring_max_payload(capacity); larger sizes are a caller bug.
  [[nodiscard]] bool try_push(std::span<const byte_span> pieces, std::size_t size);
  // Like try_push, but the record stays invisible until publish_held(), and so do the
  // records pushed after it (the consumer reads in order). Until then the producer may
  // still change its payload through held_payload(). One record is held at a time, and it
  // must be published without waiting for room: the consumer frees nothing meanwhile.
  [[nodiscard]] bool try_push_held(std::span<const byte_span> pieces, std::size_t size);
  [[nodiscard]] std::byte* held_payload() const { return held_payload_; }
  void publish_held();

  // Bytes the producer could still append, as last seen (may be stale-low, never stale-high).
  [[nodiscard]] std::size_t free_bytes_hint() const;

 private:
  [[nodiscard]] bool has_room(std::size_t bytes);
  [[nodiscard]] bool push(std::span<const byte_span> pieces, std::size_t size, bool hold);

  std::byte* data_;
  std::atomic<std::uint64_t>* released_;
  std::uint64_t capacity_;
  std::uint64_t mask_;
  std::uint64_t tail_ = 0;         // next position to write
  std::uint64_t cached_head_ = 0;  // consumer's release position, as last read
  // The held record: its payload (null when none), the word the consumer reads first (its
  // header, or the wrap marker before it), and what publish_held() stores there.
  std::byte* held_payload_ = nullptr;
  std::uint64_t held_offset_ = 0;
  std::uint64_t held_word_ = 0;
};

class ring_consumer {
 public:
  ring_consumer(std::byte* memory, std::size_t capacity);

  // The next unread record, or nothing. Does not consume it: call advance() to move past it.
  // A header whose length does not fit the ring is reported as `corrupt` (the memory is
  // shared with another process, so it is checked, not trusted).
  enum class peek_result { empty, record, corrupt };
  [[nodiscard]] peek_result peek(ring_record& out);

  // Moves the read position past the record returned by the last peek().
  void advance(const ring_record& record) { read_ = record.end; }

  // Tells the producer that every record ending at or before `position` may be overwritten.
  void release_to(std::uint64_t position);

  // True when a record is waiting (one acquire load; used before sleeping).
  [[nodiscard]] bool has_pending() const;

  [[nodiscard]] std::uint64_t read_position() const { return read_; }

 private:
  std::byte* data_;
  std::atomic<std::uint64_t>* released_;
  std::uint64_t capacity_;
  std::uint64_t mask_;
  std::uint64_t read_ = 0;
};

// Frees a consumer's records in ring order when the reader keeps some past their turn
// (receiving in place): a record handled without being kept frees at once, unless an
// earlier one is still kept, and then it frees with that one.
//
//   release.handled(ring, record.end, keep);   // after each record
//   release.release(ring, end);                 // when a kept record is done with
class ordered_release {
 public:
  void handled(ring_consumer& ring, std::uint64_t end, bool keep);
  // False (and nothing changes) when no record ending at `end` is kept.
  [[nodiscard]] bool release(ring_consumer& ring, std::uint64_t end);
  [[nodiscard]] bool keeps_any() const { return !records_.empty(); }

 private:
  struct record {
    std::uint64_t end;
    bool released;
  };
  std::deque<record> records_;  // the oldest kept record and every one after it
};

}  // namespace iso::comm
