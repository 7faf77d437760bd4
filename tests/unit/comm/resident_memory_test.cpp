// Memory populated before use:
//  - resident_memory::allocate gives zeroed memory on a 2 MiB boundary, and writing every
//    page of it afterwards takes no page fault (lazily mapped memory takes one per page);
//  - populate_for_writing does the same for a shared mapping this process was given,
//    without changing what it holds.
#include "comm/resident_memory.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "tests/support/sanitizers.hpp"

namespace iso::comm {
namespace {

constexpr std::size_t kPage = 4096;

long thread_minor_faults() {
  rusage usage{};
  ::getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_minflt;
}

// Page faults taken while writing one byte to each page of [p, p + bytes).
long faults_writing(std::byte* p, std::size_t bytes) {
  const long before = thread_minor_faults();
  for (std::size_t offset = 0; offset < bytes; offset += kPage) {
    *reinterpret_cast<volatile std::byte*>(p + offset) = std::byte{1};
  }
  return thread_minor_faults() - before;
}

TEST(ResidentMemory, IsZeroedAlignedAndTakesNoFaultWhenWritten) {
  constexpr std::size_t kBytes = (std::size_t{3} << 20) + 64;  // a ring of 3 MiB and its line
  absl::StatusOr<resident_memory> memory = resident_memory::allocate(kBytes);
  ASSERT_TRUE(memory.ok()) << memory.status();
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(memory->data()) % (std::size_t{2} << 20), 0u);
  EXPECT_GE(memory->size(), kBytes);
  for (std::size_t i = 0; i < kBytes; i += 997) ASSERT_EQ(memory->data()[i], std::byte{0}) << i;
  // 769 pages: a lazily mapped block would take one fault for each.
  // Under a sanitizer its shadow memory faults too.
  if (!iso::test::kSanitized) {
    EXPECT_LT(faults_writing(memory->data(), kBytes), 8);
  }
}

TEST(ResidentMemory, MovesOwnership) {
  absl::StatusOr<resident_memory> memory = resident_memory::allocate(kPage);
  ASSERT_TRUE(memory.ok()) << memory.status();
  std::byte* const data = memory->data();
  resident_memory moved = *std::move(memory);
  EXPECT_EQ(moved.data(), data);
  data[0] = std::byte{7};
  EXPECT_EQ(moved.data()[0], std::byte{7});
}

TEST(ResidentMemory, PopulatesASharedMappingAndKeepsItsContents) {
  constexpr std::size_t kBytes = std::size_t{1} << 20;
  const int fd = ::memfd_create("resident_memory_test", 0);
  ASSERT_NE(fd, -1);
  ASSERT_EQ(::ftruncate(fd, kBytes), 0);
  void* mapped = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  auto* p = static_cast<std::byte*>(mapped);
  p[5 * kPage + 3] = std::byte{42};  // something another process could have written
  // Not page-aligned on either end: the whole pages around it are populated.
  const absl::Status s = populate_for_writing({p + 10, kBytes - 20});
  if (absl::IsUnimplemented(s)) GTEST_SKIP() << s;
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(p[5 * kPage + 3], std::byte{42});
  if (!iso::test::kSanitized) {
    EXPECT_LT(faults_writing(p, kBytes), 8);  // 256 pages
  }
  ::munmap(mapped, kBytes);
  ::close(fd);
}

}  // namespace
}  // namespace iso::comm
