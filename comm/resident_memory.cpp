#include "comm/resident_memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <utility>

#include "absl/strings/str_format.h"
#include "base/errno_status.hpp"

// Linux 5.14; older C libraries lack the name even where the kernel has it.
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

namespace iso::comm {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;

std::size_t page_size() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }

absl::Status exhausted(std::string_view what, std::size_t bytes) {
  const absl::Status s = base::errno_status(absl::StrFormat("%s %u bytes of memory", what, bytes));
  return absl::ResourceExhaustedError(s.message());
}

}  // namespace

absl::Status populate_for_writing(std::span<std::byte> range) {
  if (range.empty()) return absl::OkStatus();
  const std::size_t page = page_size();
  const std::size_t lead = reinterpret_cast<std::uintptr_t>(range.data()) & (page - 1);
  std::byte* const first = range.data() - lead;
  const std::size_t length = (lead + range.size() + page - 1) & ~(page - 1);
  if (::madvise(first, length, MADV_POPULATE_WRITE) == 0) {
    return absl::OkStatus();
  }
  if (errno == EINVAL) {
    return absl::UnimplementedError("this kernel cannot populate memory (MADV_POPULATE_WRITE)");
  }
  return exhausted("populate", length);
}

absl::StatusOr<resident_memory> resident_memory::allocate(std::size_t bytes) {
  const std::size_t page = page_size();
  const std::size_t length = (bytes + page - 1) / page * page;
  // Mapped a huge page longer, so that a 2 MiB boundary can start it; the ends go back.
  void* raw = ::mmap(nullptr, length + kHugePage, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return exhausted("map", length);
  const std::size_t head =
      (kHugePage - (reinterpret_cast<std::uintptr_t>(raw) & (kHugePage - 1))) & (kHugePage - 1);
  std::byte* const start = static_cast<std::byte*>(raw) + head;
  if (head != 0) ::munmap(raw, head);
  ::munmap(start + length, kHugePage - head);
  resident_memory memory(start, length);

  // Advice only: without transparent huge pages (or with them off) it fails or does nothing,
  // and the pages below are 4 KiB ones.
  (void)::madvise(memory.data_, length, MADV_HUGEPAGE);
  if (::madvise(memory.data_, length, MADV_POPULATE_WRITE) != 0) {
    if (errno != EINVAL) return exhausted("populate", length);
    // A kernel before 5.14: a write to each page faults it in. The memory is new and
    // private, so nothing can see these zeros.
    for (std::size_t offset = 0; offset < length; offset += page) {
      *reinterpret_cast<volatile std::byte*>(memory.data_ + offset) = std::byte{0};
    }
  }
  return memory;
}

resident_memory::resident_memory(resident_memory&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

resident_memory& resident_memory::operator=(resident_memory&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(data_, bytes_);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

resident_memory::~resident_memory() {
  if (data_ != nullptr) ::munmap(data_, bytes_);
}

}  // namespace iso::comm
