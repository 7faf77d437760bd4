// A node's event loop: the one place that makes progress. A round runs the NIC (inline
// mode), polls the host queue and hands each delivery to the unit that registered for its
// kind (direct packets by their first byte, a tag), then lets every unit finish the round
// (the shared memory manager runs the pulses that closed). wait_for() makes rounds until a
// condition holds (wait_until(): or until a deadline), and between idle rounds a waiter
// policy spins, yields, then sleeps on the NIC (at once when oversubscribed). With several
// fibers on the node (a fiber_switch, runtime/fibers/) a wait yields to the other fibers
// instead, and the rounds and the waiter policy run only once every fiber waits.
//
//   event_loop loop(nic, waiter_policy{}, job_status);
//   loop.add_unit(smm, kIsotachKinds);        // before the first round
//   loop.add_direct_unit(plain, kPlainTag);
//   ISO_RETURN_IF_ERROR(loop.wait_for([&] { return reply_arrived; }));
//
// One thread uses a loop (the node's application thread). A new feature registers units
// here; it never edits another unit to get its deliveries.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nicfw/engine.hpp"

namespace iso::runtime {

// A part of the host runtime that owns some deliveries.
class delivery_unit {
 public:
  virtual ~delivery_unit() = default;
  // One delivery of a kind (or direct tag) this unit registered for, in the NIC's order.
  // The unit may keep the record with host_hold(). Failures go to event_loop::fail().
  virtual void on_delivery(const nicfw::delivery& d) = 0;
  // After each round's deliveries, with `closed` the NIC's closed pulse as it stood before
  // them (every EOP up to it was among them or earlier). Units run in registration order.
  [[nodiscard]] virtual absl::Status end_round(std::uint64_t closed, bool& did_work) {
    (void)closed;
    (void)did_work;
    return absl::OkStatus();
  }
  // In a round that finds the NIC holding deliveries back because the host queue is full,
  // for a unit registered with add_pressure_relief(): it should give back the records it
  // holds there (host_hold), copying what it still needs. Sets did_work when it did.
  virtual void relieve_pressure(bool& did_work) { (void)did_work; }
};

// Where wait_for() hands a wait when the node runs several fibers on its thread: the
// waiting fiber is suspended and others run until its condition holds. The switch makes
// its rounds with event_loop::wait_rounds().
class fiber_switch {
 public:
  virtual ~fiber_switch() = default;
  // Returns once `done()` holds, or with the node's failure.
  [[nodiscard]] virtual absl::Status wait(absl::FunctionRef<bool()> done) = 0;
  // Whether fibers besides the node's main one live (then a wait that sleeps outside
  // wait() holds them all).
  [[nodiscard]] virtual bool has_spawned_fibers() const = 0;
};

// How a thread waits between idle rounds: it polls, then yields its core between polls,
// then sleeps on the NIC's doorbell. The default suits a node with a core of its own: a
// peer's answer comes soonest to a node that polls for it. With more nodes than cores
// (oversubscribed()) polling and yielding take the core from the node that would answer,
// and yielding may hand it to any other process of the machine; there a node sleeps at
// once, and its SIU stays active while it dozes (others wake it with the packets that need
// it) so that its next isochron does not wait to unpark. Except while its host has a core
// to spare (spare_cores): when fewer of the job's other nodes there are busy than it has
// cores, the job's busy nodes need no more cores than they have, and a sleeper costs each
// node that sends to it a wake-up through the kernel (an interrupt to another core on a
// virtual machine). Such a node yields at every idle round, so whatever else can run on
// its core runs at once. A counter incremented by every node of 4 on 2 cores took 30 us
// per increment with every waiting node asleep, 7 us with them polling and yielding. The
// count is a hint: it knows neither where the nodes are bound nor other processes, and
// every waiting node counts as idle, also one that polls (all may poll at once) and one
// whose rounds run handlers and served calls.
struct waiter_policy {
  int spin_polls = 256;   // idle rounds that only poll
  int yield_polls = 256;  // then idle rounds that yield the core before each poll
  // Then it sleeps. Until no round has had work for `doze`, it sleeps with its SIU active
  // (inline NIC); after that, or with no doze, the SIU parks first (others stop waiting for
  // its tokens) and the node sleeps for up to `sleep` at a time.
  absl::Duration doze = absl::ZeroDuration();
  absl::Duration sleep = absl::Milliseconds(50);  // the longest sleep before the next check
  // How long a submission made while the SIU is parked (inline NIC) waits for the unpark's
  // answers and its own departure before its call returns anyway (event_loop::send_now):
  // a peer that polls or sleeps answers within a wake-up, a few hundred microseconds on
  // these machines; one that computes answers only at its next call into the runtime.
  absl::Duration unpark_wait = absl::Milliseconds(1);
  // Inline NIC, where it would sleep: if this is not 0, the node polls and yields instead
  // while fewer than `spare_cores` other nodes of its host are busy, until no round has had
  // work for `spare_core_polling` (comm::transport::busy_neighbours; a node counts as busy
  // unless it waits here itself). The cores of the host the job may use.
  std::uint32_t spare_cores = 0;
  absl::Duration spare_core_polling = absl::Microseconds(500);

  // For more nodes than cores (iso::wait_mode::block), on `cores` of them if the node may
  // poll on a core the others leave free (0: it always sleeps).
  static waiter_policy oversubscribed(std::uint32_t cores = 0) {
    return {
        .spin_polls = 4, .yield_polls = 0, .doze = absl::Milliseconds(50), .spare_cores = cores};
  }
  // For a node whose NIC thread shares a core (runtime::nic_shares_core): the answer comes
  // through that thread, so a poll before yielding only delays it.
  static waiter_policy shared_core() { return {.spin_polls = 0}; }
};

class event_loop {
 public:
  // `job_status` (may be empty) is the job's health; a waiting node checks it while idle:
  // a failed peer may never send what it waits for.
  event_loop(nicfw::engine& nic, waiter_policy policy, std::function<absl::Status()> job_status);
  event_loop(const event_loop&) = delete;
  event_loop& operator=(const event_loop&) = delete;

  [[nodiscard]] nicfw::engine& nic() { return nic_; }
  [[nodiscard]] const waiter_policy& policy() const { return policy_; }
  // From now on, `policy` (tests: sleeps of seconds turn a missed wake-up into a long
  // wait). The node's thread only.
  void set_policy(const waiter_policy& policy) { policy_ = policy; }

  // Registers `unit` for deliveries of `kinds` (not `direct`: see add_direct_unit), and,
  // unless `ends_rounds` is false, for end_round() once (a round is on the path of every
  // message: a unit with nothing to do there stays out). A kind another unit has is a
  // programming error.
  void add_unit(delivery_unit& unit, std::span<const nicfw::delivery_kind> kinds,
                bool ends_rounds = true);
  // Registers `unit` for direct packets whose first byte is `tag`, and for end_round() as
  // add_unit() does.
  void add_direct_unit(delivery_unit& unit, std::uint8_t tag, bool ends_rounds = true);
  // Registers `unit` for relieve_pressure(). Only rounds that find the host queue full call
  // it, so a unit that holds records needs no end_round() to watch for that.
  void add_pressure_relief(delivery_unit& unit) { relievers_.push_back(&unit); }

  // One round. Errors: the node's failure (fail()), the NIC's, or FailedPrecondition while
  // progress is forbidden (inside a message handler, ...: forbid_progress).
  [[nodiscard]] absl::Status progress(bool& did_work);
  // One round once enough host work (calls, and the bytes they moved) went by without one:
  // for calls that complete without waiting, which would otherwise leave an inline NIC,
  // its pulses and its credits idle. Inline: every isochron and message calls it.
  [[nodiscard]] absl::Status progress_now_and_then(std::size_t bytes = 0) {
    unpolled_work_ += bytes + kCallWeight;
    if (unpolled_work_ < kProgressEvery) return absl::OkStatus();
    bool did = false;
    return progress(did);
  }
  // Rounds until `done()`; between idle rounds, the waiter policy. The one way anything
  // on the node waits: with a fiber switch set, the wait goes there (other fibers run
  // meanwhile), except inside a message handler, where progress() refuses it. `done` may
  // act (take a message, submit): once it returned true it is not called again.
  [[nodiscard]] absl::Status wait_for(absl::FunctionRef<bool()> done);
  // wait_for(), bounded: true once `done()` held, false once `deadline` passed first (the
  // caller names what it waited for, and on whom). Each check calls `done` once and reads
  // the clock only when `done()` was false, so where both hold at the same check, done
  // wins: a `done` that acted (took a message, submitted) is never reported as given up.
  // A deadline already past still checks once.
  // Errors: those of wait_for().
  [[nodiscard]] absl::StatusOr<bool> wait_until(absl::Time deadline,
                                                absl::FunctionRef<bool()> done);
  // The job's health, as a waiting node checks it while idle: for a node that only polls
  // (it waits on nobody), so that it too learns of a peer that failed, vanished or stopped.
  [[nodiscard]] absl::Status job_status() const {
    ++job_checks_;
    return job_status_ ? job_status_() : absl::OkStatus();
  }
  // For a node that polls without waiting (node::poll), after each round, idle or not
  // (a round that always finds work, e.g. tokens owed to a dead peer, must not hide the
  // job's failure): every kPollsPerJobCheck-th such call looks at the job's health, as a
  // waiting node does once it has polled a while. Looking costs a clock read, more than
  // the idle round it follows.
  [[nodiscard]] absl::Status note_poll() {
    if (++polls_ % kPollsPerJobCheck != 0) return absl::OkStatus();
    return job_status();
  }
  static constexpr std::uint64_t kPollsPerJobCheck = 64;
  // How often the job's health was looked at through this loop (job_status(), and waits
  // while idle). The node's thread reads it.
  [[nodiscard]] std::uint64_t job_checks() const { return job_checks_; }
  // wait_for() on this stack, without switching fibers: what the fiber switch runs once
  // every fiber waits, with `done` telling whether one may run again.
  [[nodiscard]] absl::Status wait_rounds(absl::FunctionRef<bool()> done);
  // From now on waits go to `fibers` (null: none). It outlives its use here.
  void set_fiber_switch(fiber_switch* fibers) { fibers_ = fibers; }
  // Whether fibers besides the main one live: a wait that sleeps outside wait_for() would
  // hold them all. (Every node has a fiber switch; most never spawn a fiber.)
  [[nodiscard]] bool runs_fibers() const {
    return fibers_ != nullptr && fibers_->has_spawned_fibers();
  }
  // For a wait whose end no packet announces: a barrier passes beside the NICs (in the
  // job's shared memory, or in the launcher's fence). The segment's rings the transport
  // doorbells an inline NIC's node sleeps on; nothing rings a NIC thread's host channel or
  // a node of a launcher's job. While one is alive, the loop sleeps at most an eighth of
  // how long the outermost one has lasted, and at least kUnannouncedSleep, so that the
  // wait notices its end soon after it came rather than after a whole sleep
  // (policy().sleep, 50 ms), and a long wait still leaves the core to a node that computes
  // meanwhile.
  class unannounced_wait {
   public:
    explicit unannounced_wait(event_loop& loop) : loop_(loop) {
      if (loop_.unannounced_waits_++ == 0) loop_.unannounced_since_ = absl::Now();
    }
    ~unannounced_wait() { --loop_.unannounced_waits_; }
    unannounced_wait(const unannounced_wait&) = delete;
    unannounced_wait& operator=(const unannounced_wait&) = delete;

   private:
    event_loop& loop_;
  };
  static constexpr absl::Duration kUnannouncedSleep = absl::Milliseconds(1);

  // How often a wait slept on the NIC's doorbell (any thread may read it).
  [[nodiscard]] std::uint64_t sleeps() const { return sleeps_.load(std::memory_order_relaxed); }

  // Hands the NIC a submission of `kind` for `to`, waiting (making the NIC progress in
  // inline mode) while its queue is full. Errors: the NIC's failure.
  [[nodiscard]] absl::Status submit(nicfw::submission_kind kind, comm::node_id to,
                                    std::span<const comm::byte_span> pieces);

  // After a submission: what was submitted leaves now, not at the node's next call into
  // the runtime, which may come only after a long computation. With a NIC thread that is a
  // wake-up; inline it is the sending part of a NIC round (a full round per submission
  // would slow a stream of them), and one more step where this node's SIU is parked (it
  // slept in a wait): an isochron then cannot be stamped before every copy of its TM has
  // answered the unpark this round asks for. Other nodes could not receive it meanwhile,
  // and two nodes exchanging rows fell into taking turns. So it runs the NIC until the
  // answers are in and the submissions have gone, for at most the policy's unpark_wait
  // (polling, then yielding, then sleeping until a packet comes, as the policy says; only
  // polling and yielding where fibers run); after that the call returns, and what still
  // waits goes at a later call. Errors: the NIC's failure, or the job's (a failed peer).
  [[nodiscard]] absl::Status send_now();
  // send_now() where the SIU is parked (inline); nothing otherwise.
  [[nodiscard]] absl::Status send_now_if_parked() {
    if (!nic_.runs_inline() || !nic_.parked()) return absl::OkStatus();
    return send_now();
  }
  // Stops this node (the first failure wins): from now on progress() reports `status`.
  void fail(absl::Status status) {
    if (failure_.ok()) failure_ = std::move(status);
  }
  // OK, or the failure that stopped this node.
  [[nodiscard]] const absl::Status& failure() const { return failure_; }

  // Forbids progress while the node is `inside` somewhere progress would run other work in
  // the middle of (a message handler: later pulses inside the one being executed; an
  // object's guard or body; object::inspect's function), named in the errors of what is
  // refused there ("a message handler"); null allows it again. `inside` must outlive its use.
  void forbid_progress(const char* inside) { forbidden_inside_ = inside; }
  [[nodiscard]] bool progress_forbidden() const { return forbidden_inside_ != nullptr; }
  // Where progress is forbidden now, or null.
  [[nodiscard]] const char* forbidden_inside() const { return forbidden_inside_; }

 private:
  // send_now()'s wait for the unpark's answers.
  [[nodiscard]] absl::Status await_unpark();
  // Whether fewer of this host's other nodes are busy than the policy's spare_cores.
  [[nodiscard]] bool core_to_spare() const;
  // Calls that need no progress to complete (an isochron handed to the NIC, one that
  // completes here, a message taken from a full queue) leave the NIC idle when it runs
  // inline, and the pulses and credits it would have handled wait:
  //   - a program spinning on a flag only it holds never lets another node's write arrive;
  //   - a stream goes one credit window at a time: the sender's NIC stamps the whole window
  //     as one pulse once credits run out, and the receiver returns credits only once its
  //     queue is empty, so neither side works while the other does.
  // A round every 32 KiB of traffic (an eighth of the default credit window) keeps both
  // sides busy; a call counts as 32 bytes, so calls that move nothing get a round every
  // 1024. Not more often: a round costs about as much as a few small isochrons, and every
  // pulse a stream is cut into costs tokens.
  static constexpr std::size_t kCallWeight = 32;
  static constexpr std::size_t kProgressEvery = 32 * 1024;

  void on_delivery(const nicfw::delivery& d);

  nicfw::engine& nic_;
  waiter_policy policy_;
  std::function<absl::Status()> job_status_;
  std::vector<delivery_unit*> units_;      // in registration order
  std::vector<delivery_unit*> relievers_;  // add_pressure_relief(), in registration order
  std::array<delivery_unit*, nicfw::kDeliveryKinds> by_kind_{};
  std::array<delivery_unit*, 256> by_direct_tag_{};
  std::size_t unpolled_work_ = 0;  // see progress_now_and_then()
  fiber_switch* fibers_ = nullptr;
  std::uint64_t closed_ran_ = 0;  // the NIC's closed pulse as the last round took it
  std::atomic<std::uint64_t> sleeps_{0};
  mutable std::uint64_t job_checks_ = 0;
  int unannounced_waits_ = 0;     // unannounced_wait scopes alive
  absl::Time unannounced_since_;  // when the outermost one began
  std::uint64_t polls_ = 0;       // see note_poll()
  const char* forbidden_inside_ = nullptr;
  absl::Status failure_;
};

}  // namespace iso::runtime
