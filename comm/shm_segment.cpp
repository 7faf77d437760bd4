#include "comm/shm_segment.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstring>
#include <thread>
#include <utility>

#include "absl/strings/str_format.h"
#include "base/atomic_max.hpp"
#include "base/errno_status.hpp"
#include "comm/inproc.hpp"
#include "comm/resident_memory.hpp"

namespace iso::comm {

// The first page of the segment. Only fixed-size, lock-free fields: other processes read it.
struct shm_segment::header {
  static constexpr std::uint64_t kMagic = 0x69736f2d6a6f6231;  // "iso-job1"
  std::atomic<std::uint64_t> magic;
  std::uint32_t nodes;
  std::uint32_t secret_length;
  std::uint64_t ring_capacity;
  std::uint64_t total_bytes;
  std::uint64_t window_bytes;
  char secret[kMaxSecretBytes];
  alignas(64) std::atomic<std::uint32_t> barrier_arrived;
  std::atomic<std::uint32_t> barrier_generation;
  alignas(64) std::atomic<std::uint32_t> failed;  // 0, or 1 + the node that failed
  // One bit per rank, set by the process that joined as that rank. A rank is joined once:
  // a second process claiming it (a program run after another in one node, a stranger that
  // opened the segment) would corrupt the rings and the boards of the one already there.
  alignas(64) std::atomic<std::uint64_t> claimed[kMaxNodes / 64];
};

// What the segment keeps of each node beside its board, on a cache line of its own.
struct shm_segment::node_slot {
  alignas(64) std::atomic<std::uint64_t> mark;
  std::atomic<std::uint64_t> digest[2];  // by barrier ticket parity
  std::atomic<std::uint32_t> arrived;    // 1 + the ticket of the last barrier it arrived at
  std::atomic<std::int32_t> pid;         // the process hosting the node (0: not known)
  std::atomic<std::uint32_t> left;       // 1 once the node has left the job
  std::atomic<std::uint32_t> cause;      // shm_segment::failure_cause, when it failed
  std::atomic<std::uint64_t> pid_ns;     // the pid namespace that pid is of (0: not known)
};

namespace {

constexpr std::size_t kHeaderBytes = 4096;
static_assert(sizeof(std::atomic<std::uint64_t>) == 8);
constexpr std::size_t kSlotBytes = 64;  // sizeof(shm_segment::node_slot)

std::size_t boards_offset() { return kHeaderBytes; }
std::size_t slots_offset(std::uint32_t nodes) {
  return kHeaderBytes + std::size_t{nodes} * shm_segment::kBoardBytes;
}
std::size_t fabric_offset(std::uint32_t nodes) {
  return slots_offset(nodes) + std::size_t{nodes} * kSlotBytes;
}

std::size_t round_to_page(std::size_t bytes) { return (bytes + 4095) & ~std::size_t{4095}; }

// Windows follow the rings, each on a page of its own.
std::size_t windows_offset(const fabric_layout& layout) {
  return round_to_page(fabric_offset(layout.nodes) + layout.bytes());
}

void futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t expected, absl::Duration timeout) {
  const timespec relative = absl::ToTimespec(timeout);
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT, expected, &relative,
            nullptr, 0);
}

void futex_wake_all(std::atomic<std::uint32_t>* word) {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr,
            nullptr, 0);
}

absl::StatusOr<std::byte*> map(int fd, std::size_t bytes) {
  void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) return base::errno_status("map the job segment");
  return static_cast<std::byte*>(base);
}

absl::Status check_shape(std::uint32_t rank, std::uint32_t size, std::string_view secret) {
  if (size == 0 || size > shm_segment::kMaxNodes || rank >= size) {
    return absl::InvalidArgumentError(
        absl::StrFormat("node %u is not a node of a job of %u nodes (a job has 1 to %u nodes)",
                        rank, size, shm_segment::kMaxNodes));
  }
  if (secret.size() > shm_segment::kMaxSecretBytes) {
    return absl::InvalidArgumentError(absl::StrFormat("job secret of %u bytes exceeds %u",
                                                      secret.size(), shm_segment::kMaxSecretBytes));
  }
  return absl::OkStatus();
}

// Closes the descriptors join() was given unless they were handed to a segment.
class owned_fds {
 public:
  owned_fds(int fd, int report_fd) : fd_(fd), report_fd_(report_fd) {}
  owned_fds(const owned_fds&) = delete;
  owned_fds& operator=(const owned_fds&) = delete;
  ~owned_fds() {
    if (fd_ != -1) ::close(fd_);
    if (report_fd_ != -1) ::close(report_fd_);
  }
  void release() { fd_ = report_fd_ = -1; }

 private:
  int fd_;
  int report_fd_;
};

// A mapping of the segment's first page, undone when it goes out of scope.
class header_page {
 public:
  static absl::StatusOr<header_page> map_of(int fd) {
    absl::StatusOr<std::byte*> base = map(fd, kHeaderBytes);
    if (!base.ok()) return base.status();
    return header_page(*base);
  }
  header_page(header_page&& other) noexcept : base_(std::exchange(other.base_, nullptr)) {}
  header_page(const header_page&) = delete;
  header_page& operator=(const header_page&) = delete;
  ~header_page() {
    if (base_ != nullptr) ::munmap(base_, kHeaderBytes);
  }
  [[nodiscard]] std::byte* base() const { return base_; }

 private:
  explicit header_page(std::byte* base) : base_(base) {}
  std::byte* base_;
};

}  // namespace

shm_segment::shm_segment(int fd, std::byte* base, std::size_t bytes, fabric_layout layout,
                         std::size_t window_bytes, bool shuffle, int report_fd)
    : fd_(fd),
      base_(base),
      bytes_(bytes),
      layout_(layout),
      window_bytes_(window_bytes),
      shuffle_(shuffle),
      report_fd_(report_fd) {}

shm_segment::~shm_segment() {
  ::munmap(base_, bytes_);
  if (fd_ != -1) ::close(fd_);
  if (report_fd_ != -1) ::close(report_fd_);
}

shm_segment::header& shm_segment::head() const { return *reinterpret_cast<header*>(base_); }

bool shm_segment::claim(header& h, std::uint32_t rank) {
  const std::uint64_t bit = std::uint64_t{1} << (rank % 64);
  return (h.claimed[rank / 64].fetch_or(bit, std::memory_order_acq_rel) & bit) == 0;
}

absl::Status shm_segment::already_joined(std::uint32_t rank) {
  return absl::FailedPreconditionError(absl::StrFormat(
      "node %u of this job has already been joined by another process; a node joins its job "
      "once (run one iso program per node, not one after another in the same node)",
      rank));
}

absl::StatusOr<std::shared_ptr<shm_segment>> shm_segment::initialise(int fd, std::uint32_t size,
                                                                     std::string_view secret,
                                                                     const shm_options& options) {
  static_assert(sizeof(header) <= kHeaderBytes);
  if (absl::Status s = validate_ring_capacity(options.ring_capacity); !s.ok()) return s;
  // Node 0 claims its rank in the first page before it writes anything, so a second process
  // claiming node 0 cannot re-initialise a segment the job already uses. fallocate only ever
  // grows the object (ftruncate could shrink one that node 0 already sized).
  if (const int error = ::posix_fallocate(fd, 0, kHeaderBytes); error != 0) {
    errno = error;
    return base::errno_status("size the job segment's header");
  }
  {
    absl::StatusOr<header_page> page = header_page::map_of(fd);
    if (!page.ok()) return page.status();
    if (!claim(*reinterpret_cast<header*>(page->base()), 0)) return already_joined(0);
  }
  const fabric_layout layout{size, options.ring_capacity};
  const std::size_t window_bytes = round_to_page(options.window_bytes);
  const std::size_t bytes = windows_offset(layout) + std::size_t{size} * window_bytes;
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    return base::errno_status(absl::StrFormat("size the job segment to %u bytes", bytes));
  }
  absl::StatusOr<std::byte*> base = map(fd, bytes);
  if (!base.ok()) return base.status();
  // The page is zero (a fresh object) but for node 0's claim, which must stay: the fields
  // are set one by one rather than by constructing a header over it.
  auto* h = reinterpret_cast<header*>(*base);
  h->nodes = size;
  h->secret_length = static_cast<std::uint32_t>(secret.size());
  if (!secret.empty()) std::memcpy(h->secret, secret.data(), secret.size());
  h->ring_capacity = options.ring_capacity;
  h->total_bytes = bytes;
  h->window_bytes = window_bytes;
  // Published last: the others read the fields above only after seeing the magic.
  h->magic.store(header::kMagic, std::memory_order_release);
  return std::shared_ptr<shm_segment>(new shm_segment(
      fd, *base, bytes, layout, window_bytes, options.shuffle_poll_order, options.report_fd));
}

absl::StatusOr<std::shared_ptr<shm_segment>> shm_segment::join(int fd, std::uint32_t rank,
                                                               std::uint32_t size,
                                                               std::string_view secret,
                                                               const shm_options& options) {
  owned_fds owned(fd, options.report_fd);
  if (absl::Status s = check_shape(rank, size, secret); !s.ok()) return s;
  if (rank == 0) {
    auto segment = initialise(fd, size, secret, options);
    if (segment.ok()) owned.release();
    return segment;
  }
  // Wait for node 0 to size the segment, then to publish its header. Bounded: a node 0 that
  // never comes must not hang the others.
  const absl::Time deadline = absl::Now() + options.join_timeout;
  struct stat st {};
  absl::Duration pause = absl::Microseconds(50);
  for (;;) {
    if (::fstat(fd, &st) != 0) return base::errno_status("inspect the job segment");
    if (st.st_size >= static_cast<off_t>(kHeaderBytes)) {
      absl::StatusOr<header_page> page = header_page::map_of(fd);
      if (!page.ok()) return page.status();
      const auto* h = reinterpret_cast<const header*>(page->base());
      if (h->magic.load(std::memory_order_acquire) == header::kMagic) {
        const std::size_t bytes = h->total_bytes;
        const fabric_layout layout{h->nodes, h->ring_capacity};
        const std::size_t window_bytes = h->window_bytes;
        if (h->secret_length != secret.size() ||
            std::memcmp(h->secret, secret.data(), secret.size()) != 0) {
          return absl::PermissionDeniedError(
              "the job secret does not match the segment's: this process is not a member");
        }
        if (layout.nodes != size) {
          return absl::FailedPreconditionError(absl::StrFormat(
              "the job segment is for %u nodes, this node was told %u", layout.nodes, size));
        }
        // Sized before the magic was published; st is from before we saw the magic.
        if (::fstat(fd, &st) != 0) return base::errno_status("inspect the job segment");
        if (bytes > static_cast<std::size_t>(st.st_size)) {
          return absl::FailedPreconditionError(absl::StrFormat(
              "the job segment has %u bytes, its header says %u", st.st_size, bytes));
        }
        absl::StatusOr<std::byte*> whole = map(fd, bytes);
        if (!whole.ok()) return whole.status();
        if (!claim(*reinterpret_cast<header*>(*whole), rank)) {
          ::munmap(*whole, bytes);
          return already_joined(rank);
        }
        owned.release();
        return std::shared_ptr<shm_segment>(new shm_segment(fd, *whole, bytes, layout, window_bytes,
                                                            options.shuffle_poll_order,
                                                            options.report_fd));
      }
    }
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrFormat("node 0 did not initialise the job segment within %s",
                          absl::FormatDuration(options.join_timeout)));
    }
    // Start-up only: node 0 has no way to signal a descriptor that is not yet mapped.
    std::this_thread::sleep_for(absl::ToChronoMicroseconds(pause));
    pause = std::min(pause * 2, absl::Milliseconds(5));
  }
}

absl::StatusOr<shm_segment::process_end> shm_segment::note_process_ended(int fd,
                                                                         std::uint32_t node) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return base::errno_status("inspect the job segment");
  // Before node 0 published the header nobody can have joined (the others wait for it).
  if (st.st_size < static_cast<off_t>(kHeaderBytes)) return process_end::not_joined;
  std::size_t bytes = 0;
  fabric_layout layout{};
  std::size_t window_bytes = 0;
  {
    absl::StatusOr<header_page> page = header_page::map_of(fd);
    if (!page.ok()) return page.status();
    const auto* h = reinterpret_cast<const header*>(page->base());
    if (h->magic.load(std::memory_order_acquire) != header::kMagic) {
      return process_end::not_joined;
    }
    if (node >= h->nodes) {
      return absl::InvalidArgumentError(
          absl::StrFormat("node %u is not a node of this job of %u nodes", node, h->nodes));
    }
    const std::uint64_t bit = std::uint64_t{1} << (node % 64);
    if ((h->claimed[node / 64].load(std::memory_order_acquire) & bit) == 0) {
      return process_end::not_joined;
    }
    bytes = h->total_bytes;
    layout = fabric_layout{h->nodes, h->ring_capacity};
    window_bytes = h->window_bytes;
  }
  if (::fstat(fd, &st) != 0) return base::errno_status("inspect the job segment");
  if (bytes > static_cast<std::size_t>(st.st_size)) {
    return absl::FailedPreconditionError(
        absl::StrFormat("the job segment has %u bytes, its header says %u", st.st_size, bytes));
  }
  absl::StatusOr<std::byte*> whole = map(fd, bytes);
  if (!whole.ok()) return whole.status();
  // A view that owns the mapping only: the descriptor stays the caller's.
  shm_segment view(-1, *whole, bytes, layout, window_bytes, false, -1);
  // The node marks itself left before its process may end, so a node that left is seen so.
  if (view.left(node)) return process_end::left;
  view.mark_failed(node, failure_cause::exited);
  return view.head().failed.load(std::memory_order_acquire) == node + 1
             ? process_end::first_failure
             : process_end::other_failure;
}

absl::StatusOr<std::shared_ptr<shm_segment>> shm_segment::create_private(
    std::uint32_t size, std::string_view secret, const shm_options& options) {
  if (absl::Status s = check_shape(0, size, secret); !s.ok()) return s;
  const int fd = ::memfd_create("iso-job", MFD_CLOEXEC);
  if (fd < 0) return base::errno_status("create a private job segment");
  // The nodes of a private segment are this process's threads, not claimants.
  shm_options private_options = options;
  private_options.report_fd = -1;
  auto segment = initialise(fd, size, secret, private_options);
  if (!segment.ok()) ::close(fd);
  return segment;
}

absl::Status shm_segment::barrier(absl::Duration timeout) {
  header& h = head();
  if (const std::uint32_t failed = h.failed.load(std::memory_order_acquire); failed != 0) {
    return absl::AbortedError(absl::StrFormat("node %u failed; the job is stopping", failed - 1));
  }
  const absl::Time deadline = absl::Now() + timeout;
  const std::uint32_t generation = h.barrier_generation.load(std::memory_order_acquire);
  if (h.barrier_arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == layout_.nodes) {
    h.barrier_arrived.store(0, std::memory_order_relaxed);
    h.barrier_generation.fetch_add(1, std::memory_order_release);
    futex_wake_all(&h.barrier_generation);
    return absl::OkStatus();
  }
  while (h.barrier_generation.load(std::memory_order_acquire) == generation) {
    if (const std::uint32_t failed = h.failed.load(std::memory_order_acquire); failed != 0) {
      return absl::AbortedError(absl::StrFormat("node %u failed; the job is stopping", failed - 1));
    }
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return absl::DeadlineExceededError(
          absl::StrFormat("barrier: %u of %u nodes arrived within %s", h.barrier_arrived.load(),
                          layout_.nodes, absl::FormatDuration(timeout)));
    }
    // Wake at least every 100 ms to notice a failed job.
    futex_wait(&h.barrier_generation, generation, std::min(left, absl::Milliseconds(100)));
  }
  return absl::OkStatus();
}

std::uint32_t shm_segment::barrier_arrive() {
  header& h = head();
  const std::uint32_t generation = h.barrier_generation.load(std::memory_order_acquire);
  if (h.barrier_arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == layout_.nodes) {
    h.barrier_arrived.store(0, std::memory_order_relaxed);
    h.barrier_generation.fetch_add(1, std::memory_order_release);
    futex_wake_all(&h.barrier_generation);
    // A node waiting in the runtime sleeps on its transport doorbell (an inline NIC's), not
    // on the generation: the barrier's end wakes it there too.
    for (std::uint32_t node = 0; node < layout_.nodes; ++node) {
      reinterpret_cast<doorbell*>(fabric() + layout_.doorbell_offset(node))->ring();
    }
  }
  return generation;
}

absl::Status shm_segment::job_status() const {
  const std::uint32_t failed = head().failed.load(std::memory_order_acquire);
  if (failed == 0) return absl::OkStatus();
  const std::uint32_t node = failed - 1;
  switch (static_cast<failure_cause>(slot(node).cause.load(std::memory_order_acquire))) {
    case failure_cause::exited:
      return absl::AbortedError(absl::StrFormat(
          "node %u ended before leaving the job (its process exited before the job's end "
          "barrier); the job is stopping",
          node));
    case failure_cause::stopped:
      return absl::AbortedError(absl::StrFormat(
          "node %u stopped responding (its process is stopped, e.g. by SIGSTOP or a "
          "debugger); the job is stopping",
          node));
    case failure_cause::failed:
      break;
  }
  return absl::AbortedError(absl::StrFormat("node %u failed; the job is stopping", node));
}

absl::StatusOr<bool> shm_segment::barrier_passed(std::uint32_t ticket) const {
  // A failed job fails every barrier: after a failure the arrival count is meaningless
  // (the dead node never arrives, a survivor's arrival may be counted towards a later one).
  if (absl::Status s = job_status(); !s.ok()) return s;
  return head().barrier_generation.load(std::memory_order_acquire) != ticket;
}

shm_segment::node_slot& shm_segment::slot(std::uint32_t node) const {
  static_assert(sizeof(node_slot) == kSlotBytes);
  return reinterpret_cast<node_slot*>(base_ + slots_offset(nodes()))[node];
}

std::uint32_t shm_segment::barrier_arrive(std::uint32_t node, std::uint64_t digest) {
  node_slot& mine = slot(node);
  // The generation cannot move before this node arrives, so the ticket is known here.
  const std::uint32_t ticket = head().barrier_generation.load(std::memory_order_acquire);
  mine.digest[ticket % 2].store(digest, std::memory_order_relaxed);
  mine.arrived.store(ticket + 1, std::memory_order_relaxed);
  // The arrival below releases both stores to whoever sees the barrier pass.
  return barrier_arrive();
}

std::uint64_t shm_segment::barrier_digest(std::uint32_t node, std::uint32_t ticket) const {
  return slot(node).digest[ticket % 2].load(std::memory_order_acquire);
}

bool shm_segment::barrier_arrived(std::uint32_t node, std::uint32_t ticket) const {
  return slot(node).arrived.load(std::memory_order_acquire) == ticket + 1;
}

void shm_segment::set_process(std::uint32_t node, std::int32_t pid, std::uint64_t pid_namespace) {
  // The namespace first: whoever sees the pid sees where it is from.
  slot(node).pid_ns.store(pid_namespace, std::memory_order_relaxed);
  slot(node).pid.store(pid, std::memory_order_release);
}

std::uint64_t shm_segment::process_namespace(std::uint32_t node) const {
  return slot(node).pid_ns.load(std::memory_order_relaxed);
}

std::int32_t shm_segment::process(std::uint32_t node) const {
  return slot(node).pid.load(std::memory_order_acquire);
}

void shm_segment::mark_left(std::uint32_t node) {
  slot(node).left.store(1, std::memory_order_release);
}

bool shm_segment::left(std::uint32_t node) const {
  return slot(node).left.load(std::memory_order_acquire) != 0;
}

void shm_segment::publish_mark(std::uint32_t node, std::uint64_t value) {
  base::raise_to(slot(node).mark, value, std::memory_order_release);
}

std::uint64_t shm_segment::max_mark() const {
  std::uint64_t most = 0;
  for (std::uint32_t n = 0; n < nodes(); ++n) {
    most = std::max(most, slot(n).mark.load(std::memory_order_acquire));
  }
  return most;
}

std::span<std::byte> shm_segment::board(std::uint32_t node) {
  return {base_ + boards_offset() + std::size_t{node} * kBoardBytes, kBoardBytes};
}

void shm_segment::mark_failed(std::uint32_t node, failure_cause cause) {
  // Set before the mark, so whoever sees the mark sees why (a later cause for another node
  // is harmless: only the first failed node is named).
  if (head().failed.load(std::memory_order_acquire) == 0) {
    slot(node).cause.store(static_cast<std::uint32_t>(cause), std::memory_order_release);
  }
  mark_failed(node);
}

void shm_segment::mark_failed(std::uint32_t node) {
  // Reported before the job is marked failed, so the launcher has the report before any
  // other node can see the failure and exit because of it.
  if (report_fd_ != -1 && head().failed.load(std::memory_order_acquire) == 0) {
    const std::string line = absl::StrFormat("%u\n", node);
    [[maybe_unused]] const ssize_t ignored = ::write(report_fd_, line.data(), line.size());
  }
  std::uint32_t expected = 0;
  head().failed.compare_exchange_strong(expected, node + 1, std::memory_order_acq_rel);
  futex_wake_all(&head().barrier_generation);
}

std::byte* shm_segment::fabric() const { return base_ + fabric_offset(layout_.nodes); }

std::span<std::byte> shm_segment::window(std::uint32_t node) const {
  if (window_bytes_ == 0 || node >= layout_.nodes) return {};
  return {base_ + windows_offset(layout_) + std::size_t{node} * window_bytes_, window_bytes_};
}

std::unique_ptr<transport> make_shm_transport(std::shared_ptr<shm_segment> segment, node_id self) {
  std::byte* fabric = segment->fabric();
  const fabric_layout layout = segment->layout_;
  const bool shuffle = segment->shuffle_;
  // The rings this node writes and reads, in place before the first packet: touched lazily,
  // each first pass over a ring takes a page fault per 4 KiB, in every process that maps it.
  // Only an optimisation: a kernel or a memory limit that refuses it leaves them lazy.
  for (std::uint32_t peer = 0; peer < layout.nodes; ++peer) {
    for (const std::size_t offset :
         {layout.ring_offset(self, peer), layout.ring_offset(peer, self)}) {
      (void)populate_for_writing({fabric + offset, byte_ring_footprint(layout.ring_capacity)});
    }
  }
  return std::make_unique<ring_transport>(self, layout, fabric, std::move(segment),
                                          ring_transport_options{.shuffle_poll_order = shuffle});
}

}  // namespace iso::comm
