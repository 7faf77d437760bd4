// Private memory whose pages are all in place before it is used: a queue or ring that is
// touched lazily takes one page fault per page on its first pass (about 10 us each on a VM,
// thousands of them for the NIC's host queues), and the job runs slowly until every page has
// been touched once. Taking them at start-up costs a few milliseconds instead.
//
//   absl::StatusOr<resident_memory> m = resident_memory::allocate(bytes);
//   if (!m.ok()) return m.status();
//   std::byte* p = m->data();   // zeroed, every page present and writable
//   (void)populate_for_writing(ring_of_a_shared_segment);   // the same for shared memory
#pragma once

#include <cstddef>
#include <span>

#include "absl/status/statusor.h"

namespace iso::comm {

// Puts the pages under `range` (widened to whole pages) in this process's page table,
// writable, allocating them in their file or segment if they were holes; their contents do
// not change, so memory that other processes use meanwhile is safe. For shared memory that
// this process was given rather than allocated (a segment's rings). Unimplemented on a
// kernel before Linux 5.14, ResourceExhausted when memory runs out.
absl::Status populate_for_writing(std::span<std::byte> range);

class resident_memory {
 public:
  // `bytes` of zeroed memory, starting on a 2 MiB boundary and asked to be backed by
  // transparent huge pages where the system has them (a handful of faults instead of one per
  // 4 KiB, and fewer TLB misses), every page populated for writing. ResourceExhausted when
  // the system cannot map or populate it.
  static absl::StatusOr<resident_memory> allocate(std::size_t bytes);

  resident_memory(resident_memory&& other) noexcept;
  resident_memory& operator=(resident_memory&& other) noexcept;
  resident_memory(const resident_memory&) = delete;
  resident_memory& operator=(const resident_memory&) = delete;
  ~resident_memory();

  [[nodiscard]] std::byte* data() const { return data_; }
  [[nodiscard]] std::size_t size() const { return bytes_; }

 private:
  resident_memory(std::byte* data, std::size_t mapped) : data_(data), bytes_(mapped) {}
  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;  // as mapped: a whole number of pages
};

}  // namespace iso::comm
