// A node's copies of isotach pages, kept in its memory window so that other nodes on the
// same host can read them without the NIC (same-host reads, docs/same-host-reads.md).
//
// The owner is the only writer. It changes variables only inside change sections (a
// sequence lock: odd while changing), and publishes where its copies stand in logical time:
//   through     every operation of every pulse up to this one has executed here, and
//               nothing of a later pulse has;
//   next_local  every purely local isochron of this node that ran so far has a lower rank;
//   step        the owner's next change sits at this step or a later one (order_point.hpp).
// A reader takes a consistent snapshot of them and of the variables it wants, or retries.
// A reader that needs the copies valid further on between the same two pulses raises
// `step` inside its snapshot: the owner reads it after opening its next change section,
// so either the reader sees that section begun (and retries) or the change sits later.
// A reader whose owner stands behind what it needs says how far it needs it (`wanted`), and
// may sleep until `through` moves on: the owner, which otherwise runs its pulses only when
// it next polls, polls at its next call while someone wants more, and rings the window's
// doorbell each time `through` moves on.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

#include "absl/functional/function_ref.h"
#include "absl/time/time.h"
#include "comm/doorbell.hpp"

namespace iso::runtime {

// One variable of a copy. Only its owner writes it, with atomic stores, inside a change
// section; readers load it atomically and keep the value only if no section overlapped.
struct shared_variable {
  std::uint64_t value = 0;
  std::uint32_t sched_by = 0;  // 0: substantiated; else 1 + the node whose sched is latest
  std::uint32_t unused = 0;
};
static_assert(sizeof(shared_variable) == 16);

// The first two cache lines of a window; the pages follow.
struct window_header {
  std::atomic<std::uint64_t> sequence;  // odd while the owner changes its copies
  std::atomic<std::uint64_t> through;
  std::atomic<std::uint64_t> next_local;
  std::atomic<std::uint64_t> wanted;  // the highest `through` a waiting reader needs
  std::atomic<std::uint64_t> step;    // raised by the owner and its readers, never lowered
  // Rung when `through` moves on; on a line of its own, since readers write it to sleep.
  comm::doorbell advanced;
};
static_assert(sizeof(window_header) == 128 && std::atomic<std::uint64_t>::is_always_lock_free);

// Where the owner's copies stand, as a reader saw it.
struct window_stand {
  std::uint64_t through = 0;
  std::uint64_t next_local = 0;
  std::uint64_t step = 0;
};

// Where a window's header and pages lie: the layout the owner and its readers share.
class window_map {
 public:
  // Pages that fit (local index < capacity() lives in the window).
  [[nodiscard]] std::uint32_t capacity() const { return capacity_; }

 protected:
  window_map() = default;
  // Empty (or too small) `memory`: no window.
  window_map(std::span<std::byte> memory, std::uint32_t page_variables);
  [[nodiscard]] shared_variable* page_at(std::uint32_t local_index) const {
    return pages_ + std::size_t{local_index} * page_variables_;
  }

  window_header* header_ = nullptr;  // null: no window
  shared_variable* pages_ = nullptr;
  std::uint32_t page_variables_ = 0;
  std::uint32_t capacity_ = 0;
};

class copy_window : public window_map {
 public:
  // Empty `memory`: no window (every page lives on the heap, nobody reads them directly).
  copy_window(std::span<std::byte> memory, std::uint32_t page_variables)
      : window_map(memory, page_variables) {}

  [[nodiscard]] shared_variable* page(std::uint32_t local_index) const {
    return page_at(local_index);
  }

  // A change section opens at the first change (local_memory calls begin_change() before
  // each) and closes at end_change(): a pulse that changes nothing here (messages, reads)
  // costs readers nothing and writes no lock word. A purely local isochron that is not
  // all reads opens one before it runs, for its step (change_step).
  void begin_change();
  void end_change();
  [[nodiscard]] bool changing() const { return changing_; }
  // Inside a change section: the step its changes sit at, at least `least` (raised in the
  // window so that later readers see it). Without a window: `least`.
  [[nodiscard]] std::uint64_t change_step(std::uint64_t least);
  void publish_through(std::uint64_t pulse);
  void publish_next_local(std::uint64_t rank);
  // The word wanted() reads (null without a window), for the NIC to watch.
  [[nodiscard]] const std::atomic<std::uint64_t>* wanted_word() const {
    return header_ == nullptr ? nullptr : &header_->wanted;
  }
  // The highest `through` a reader has waited for (0 without a window).
  [[nodiscard]] std::uint64_t wanted() const {
    return header_ == nullptr ? 0 : header_->wanted.load(std::memory_order_relaxed);
  }

 private:
  std::uint64_t sequence_ = 0;  // the owner's copy of the lock word
  std::uint64_t step_ = 0;      // the open change section's step
  bool changing_ = false;
  bool owes_ring_ = false;  // `through` moved on inside the open change section
};

// Another node's window, read-only.
class window_reader : public window_map {
 public:
  enum class outcome { consistent, declined, changing };

  window_reader() = default;
  window_reader(std::span<std::byte> memory, std::uint32_t page_variables)
      : window_map(memory, page_variables) {}

  [[nodiscard]] bool present() const { return header_ != nullptr; }
  [[nodiscard]] const shared_variable* page(std::uint32_t local_index) const {
    return page_at(local_index);
  }

  // Calls `visit(stand)`, which may load variables with load() and returns whether it
  // wants them. consistent: it did, and every load came from the one state `stand`
  // describes; changing: the owner was changing its copies meanwhile (try again);
  // declined: `visit` returned false.
  template <typename Visit>
  outcome snapshot(Visit&& visit) const;

  // Sleeps until the owner's copies stand further on than `through` (a stand a snapshot
  // saw), or for at most `timeout`, unless `may_sleep()` says otherwise once the sleep is
  // announced (whoever else rings advanced_bell() is then heard); may return early. For a
  // reader whose owner stands behind: sleeping leaves the core to it, where spinning would
  // keep it from running.
  void wait_past(std::uint64_t through, absl::Duration timeout,
                 absl::FunctionRef<bool()> may_sleep) const;
  // The doorbell the owner rings when its copies move on.
  [[nodiscard]] comm::doorbell& advanced_bell() const { return header_->advanced; }
  // Tells the owner that this reader waits for its copies to stand at `through`.
  void want(std::uint64_t through) const;
  // Inside snapshot()'s `visit` only: the owner's next change will sit at `step` or later,
  // so the state being read holds up to there (if the snapshot turns out consistent).
  void raise_step(std::uint64_t step) const;

  [[nodiscard]] static shared_variable load(const shared_variable& v) {
    auto& mutable_v = const_cast<shared_variable&>(v);  // atomic_ref<const T> is C++26
    shared_variable out;
    out.value = std::atomic_ref<std::uint64_t>(mutable_v.value).load(std::memory_order_relaxed);
    out.sched_by =
        std::atomic_ref<std::uint32_t>(mutable_v.sched_by).load(std::memory_order_relaxed);
    return out;
  }
};

template <typename Visit>
window_reader::outcome window_reader::snapshot(Visit&& visit) const {
  // seq_cst: a reader's own change sections end with a seq_cst store, so a snapshot it
  // takes after one cannot be ordered before it (store buffering would break SC).
  const std::uint64_t before = header_->sequence.load(std::memory_order_seq_cst);
  if (before & 1) return outcome::changing;
  const window_stand stand{header_->through.load(std::memory_order_acquire),
                           header_->next_local.load(std::memory_order_acquire),
                           header_->step.load(std::memory_order_seq_cst)};
  const bool wanted = visit(stand);
  std::atomic_thread_fence(std::memory_order_acquire);
  // seq_cst: after a raise_step in `visit`, as begin_change's store and load are.
  if (header_->sequence.load(std::memory_order_seq_cst) != before) return outcome::changing;
  return wanted ? outcome::consistent : outcome::declined;
}

// Writes to a variable of the owner's own copy (the owner's only way to change one).
inline void store_value(shared_variable& v, std::uint64_t value) {
  std::atomic_ref<std::uint64_t>(v.value).store(value, std::memory_order_relaxed);
}
inline void store_sched(shared_variable& v, std::uint32_t sched_by) {
  std::atomic_ref<std::uint32_t>(v.sched_by).store(sched_by, std::memory_order_relaxed);
}

}  // namespace iso::runtime
