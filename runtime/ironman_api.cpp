// The Ironman C API (include/iso/ironman.h) on top of the C++ API. One node per process,
// kept by one object between open_net() and the last try_close_net(); every call turns C++
// errors into FAILURE and a message (ironman_last_error), and lets nothing escape into C.
#define ISO_IRONMAN_NO_REPORT_NAMES  // this file calls node::poll() and friends
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "iso/error.hpp"
#include "iso/ironman.h"
#include "iso/isochron.hpp"
#include "iso/node.hpp"
#include "iso/shared.hpp"
#include "runtime/job.hpp"
#include "runtime/node_state.hpp"

namespace iso::runtime {
namespace {

// Barrier channels of the report's API (0 and 1), and the two the binding keeps for itself:
// the non-isotach barrier and the shut-down barrier (the report's SHUTDOWN_BARRIER).
constexpr channel_id kApplicationBarriers = 2;
constexpr channel_id kNonIsotachBarrier = 6;
constexpr channel_id kShutdownBarrier = 7;
// Signal channels the application may claim (0 is the report's reset signal).
constexpr int kFirstSignal = 1;
constexpr int kLastSignal = 5;
// iso_msg carries a 16-bit length.
constexpr std::size_t kMaxPayload = 65535;

constexpr unsigned kReadPending = 1;  // iso_var32::state
constexpr unsigned kReadDone = 2;

thread_local std::string t_last_error;

// What a call that fails throws inside the binding; caught at the C edge.
struct failure {
  std::string message;
};

[[noreturn]] void fail(std::string message) { throw failure{std::move(message)}; }

// Runs `body` for the C call `what`: SUCCESS, or FAILURE with the reason kept for
// ironman_last_error(). `body` may return an int of its own (receive's -1).
template <typename Body>
int guarded(const char* what, Body&& body) noexcept {
  try {
    t_last_error.clear();
    if constexpr (std::is_void_v<decltype(body())>) {
      body();
      return SUCCESS;
    } else {
      return body();
    }
  } catch (const failure& f) {
    t_last_error = absl::StrFormat("%s: %s", what, f.message);
  } catch (const iso::error& e) {
    t_last_error = absl::StrFormat("%s: %s", what, e.what());
  } catch (const std::exception& e) {
    t_last_error = absl::StrFormat("%s: %s", what, e.what());
  } catch (...) {
    t_last_error = absl::StrFormat("%s: an unknown error", what);
  }
  return FAILURE;
}

class ironman_api {
 public:
  static ironman_api& instance() {
    static ironman_api api;
    return api;
  }

  void open_net() {
    if (state_ == state::open) fail("the network is open already; call open_net() once");
    if (state_ == state::closed) {
      fail("this process has already been in the job; a process joins once");
    }
    state_ = state::closed;  // whatever happens from here, a process joins once
    absl::StatusOr<job_plan> plan = plan_job(iso::options{});
    if (!plan.ok()) fail(std::string(plan.status().message()));
    absl::StatusOr<process_node> joined = join_process_node(*plan);
    if (!joined.ok()) fail(std::string(joined.status().message()));
    try {
      joined->self->barrier();  // start: nobody sends before everyone can receive
      memory_ = joined->self->allocate<std::int32_t>(ISO_SMM_WORDS, iso::placement::everywhere());
    } catch (...) {
      joined->fabric->mark_failed(joined->rank);  // the peers stop waiting for this node
      throw;
    }
    fabric_ = std::move(joined->fabric);
    node_ = std::move(joined->self);
    state_ = state::open;
    if (!exit_hook_) {
      std::atexit([] { instance().leave_at_exit(); });
      exit_hook_ = true;
    }
  }

  int try_close_net() {
    iso::node& n = node();
    end_isochron();
    if (!closing_) {
      n.start_barrier(kShutdownBarrier, barrier_mode::strong);
      closing_ = true;
    }
    n.poll();
    if (!n.barrier_complete(kShutdownBarrier)) return FAILURE;
    // Every node is here and every isotach message sent before has been delivered: what
    // is left is the runtime's own end, which all nodes now reach at once.
    leave_job(n);
    close();
    return SUCCESS;
  }

  int poll() {
    iso::node& n = node();
    n.poll();
    if (!held_notice_) held_notice_ = next_notice(n);
    const bool waiting = held_notice_ || detail::node_state::of(n).messages_waiting() > 0;
    return waiting ? SUCCESS : -1;
  }

  [[nodiscard]] int my_node() const { return is_open() ? static_cast<int>(node_->id()) : -1; }
  [[nodiscard]] int hosts() const { return is_open() ? static_cast<int>(node_->count()) : -1; }
  [[nodiscard]] int max_payload() const {
    return is_open() ? static_cast<int>(std::min(kMaxPayload, node_->max_message_size())) : -1;
  }

  void send(int target, const void* data, int size) {
    iso::node& n = node();
    check_target(target);
    if (target == static_cast<int>(n.id())) {
      fail(
          absl::StrFormat("node %d is this node: non-isotach messages to oneself are not "
                          "supported (use iso_send)",
                          target));
    }
    n.send(static_cast<node_id>(target), payload(data, size));
  }

  int receive(noniso_mbm* m) {
    if (m == nullptr) fail("the message is NULL");
    iso::node& n = node();
    last_message_.reset();  // its bytes may be reused from now on
    std::optional<iso::message> got = n.try_receive();
    if (!got) return -1;
    last_message_ = std::move(got);
    m->sender_id = static_cast<int>(last_message_->source());
    m->size = static_cast<int>(last_message_->bytes().size());
    m->msg.data_ptr = const_cast<std::byte*>(last_message_->bytes().data());
    return SUCCESS;
  }

  void initiate_barrier() {
    iso::node& n = node();
    if (noniso_barrier_started_) {
      fail(
          "the previous barrier has not completed here yet (barrier_completed() has not "
          "returned SUCCESS)");
    }
    end_isochron();
    n.start_barrier(kNonIsotachBarrier, barrier_mode::weak);
    noniso_barrier_started_ = true;
  }

  int barrier_completed() {
    iso::node& n = node();
    if (!noniso_barrier_started_) {
      t_last_error = "barrier_completed: no barrier was started (initiate_barrier)";
      return FAILURE;
    }
    n.poll();
    if (!n.barrier_complete(kNonIsotachBarrier)) return FAILURE;
    noniso_barrier_started_ = false;
    return SUCCESS;
  }

  void iso_send(int target, const void* data, int size, int last) {
    require_open();
    check_target(target);
    isochron().send(static_cast<node_id>(target), payload(data, size));
    if (last != 0) end_isochron();
  }

  void iso_end() {
    require_open();
    end_isochron();
  }

  int iso_receive(iso_mbm* m) {
    if (m == nullptr) fail("the message is NULL");
    iso::node& n = node();
    last_notice_.reset();  // its bytes may be reused from now on
    std::optional<notice> got = held_notice_ ? std::move(held_notice_) : next_notice(n);
    held_notice_.reset();
    if (!got) return -1;
    switch (got->what) {
      case notice::kind::message:
        last_notice_ = std::move(got);
        m->tag = ISO_MBM;
        m->info.msg.sender = static_cast<unsigned short>(last_notice_->source);
        m->info.msg.length = static_cast<unsigned short>(last_notice_->bytes.size());
        m->info.msg.data = last_notice_->bytes.data();
        break;
      case notice::kind::signal:
        m->tag = BS_MARKER;
        m->info.bits = static_cast<unsigned char>(ISO_SIGNAL_BIT(got->channel));
        break;
      case notice::kind::barrier:
        m->tag = BS_MARKER;
        m->info.bits = static_cast<unsigned char>(ISO_BARRIER_BIT(got->channel));
        break;
    }
    return SUCCESS;
  }

  void iso_read(shmem_addr_t address, iso_var32* into, int last) {
    if (into == nullptr) fail("the local variable is NULL");
    const shared_var<std::int32_t> word = shared_word(address);
    require_open();
    forget(*into);
    detail::read_handle handle = isochron().read_raw(word.where(), sizeof(std::int32_t), 1);
    into->slot = park(std::move(handle));
    into->state = kReadPending;
    if (last != 0) end_isochron();
  }

  long iso_retrieve(iso_var32* from) {
    if (from == nullptr) fail("the local variable is NULL");
    require_open();
    if (from->state == kReadDone) return from->value;
    if (from->state != kReadPending || from->slot >= reads_.size() || !reads_[from->slot]) {
      fail("the local variable holds no read (iso_read into it first)");
    }
    const std::uint64_t bits = reads_[from->slot]->wait()[0];
    from->value = static_cast<long>(static_cast<std::int32_t>(static_cast<std::uint32_t>(bits)));
    forget(*from);
    from->state = kReadDone;
    return from->value;
  }

  void iso_write(shmem_addr_t address, long value, int last) {
    const shared_var<std::int32_t> word = shared_word(address);
    require_open();
    isochron().write(word, static_cast<std::int32_t>(value));
    if (last != 0) end_isochron();
  }

  void iso_sched(shmem_addr_t address, int last) {
    const shared_var<std::int32_t> word = shared_word(address);
    require_open();
    isochron().sched(word);
    if (last != 0) end_isochron();
  }

  void iso_assign(shmem_addr_t address, long value, int last) {
    const shared_var<std::int32_t> word = shared_word(address);
    require_open();
    isochron().assign(word, static_cast<std::int32_t>(value));
    if (last != 0) end_isochron();
  }

  void register_signal(int channel) {
    check_signal(channel);
    signals_ |= 1u << channel;
  }
  void clear_signal(int channel) {
    check_signal(channel);
    signals_ &= ~(1u << channel);
  }
  void send_signal(int channel) {
    check_signal(channel);
    iso::node& n = node();
    if ((signals_ & (1u << channel)) == 0) {
      fail(absl::StrFormat("signal channel %d is not registered here (iso_register_signal)",
                           channel));
    }
    if (iso_) fail("an isochron is being issued; end it first (iso_end)");
    n.signal(static_cast<channel_id>(channel));
  }

  void register_barrier(int channel, unsigned char mode) {
    check_barrier(channel, mode);
    if (barriers_[channel]) {
      fail(absl::StrFormat("barrier channel %d is registered already", channel));
    }
    barriers_[channel] = static_cast<barrier_mode>(mode);
  }
  void clear_barrier(int channel) {
    if (channel < 0 || channel >= static_cast<int>(kApplicationBarriers)) {
      fail(absl::StrFormat("barrier channel %d is not 0 or 1", channel));
    }
    barriers_[channel].reset();
  }
  void barrier(int channel, unsigned char mode) {
    check_barrier(channel, mode);
    iso::node& n = node();
    if (!barriers_[channel]) {
      fail(absl::StrFormat("barrier channel %d is not registered (iso_register_barrier)", channel));
    }
    if (*barriers_[channel] != static_cast<barrier_mode>(mode)) {
      fail(absl::StrFormat("barrier channel %d is registered %s, not %s", channel,
                           mode_name(static_cast<unsigned char>(*barriers_[channel])),
                           mode_name(mode)));
    }
    if (iso_) fail("an isochron is being issued; end it first (iso_end)");
    n.start_barrier(static_cast<channel_id>(channel), static_cast<barrier_mode>(mode));
  }

 private:
  enum class state { never, open, closed };

  [[nodiscard]] bool is_open() const { return state_ == state::open; }

  // Throws unless the network is open (between open_net() and the last try_close_net()).
  void require_open() { (void)node(); }

  iso::node& node() {
    if (state_ == state::never) fail("the network is not open; call open_net() first");
    if (state_ == state::closed) fail("the network is closed (try_close_net succeeded)");
    return *node_;
  }

  iso::isochron& isochron() {
    if (!iso_) iso_.emplace(*node_);
    return *iso_;
  }

  void end_isochron() {
    if (!iso_) return;
    try {
      iso_->end();  // ended even when it throws: the isochron is lost then, not retried
    } catch (...) {
      iso_.reset();
      throw;
    }
    iso_.reset();
  }

  void check_target(int target) const {
    if (target < 0 || target >= static_cast<int>(node_->count())) {
      fail(absl::StrFormat("node %d is not a node of this job of %u", target, node_->count()));
    }
  }

  [[nodiscard]] std::span<const std::byte> payload(const void* data, int size) const {
    if (size < 0) fail(absl::StrFormat("size %d is negative", size));
    if (data == nullptr && size > 0) fail("data is NULL");
    if (static_cast<std::size_t>(size) > static_cast<std::size_t>(max_payload())) {
      fail(absl::StrFormat("%d bytes exceed get_max_payload(), %d", size, max_payload()));
    }
    return {static_cast<const std::byte*>(data), static_cast<std::size_t>(size)};
  }

  [[nodiscard]] shared_var<std::int32_t> shared_word(shmem_addr_t address) const {
    if (address >= ISO_SMM_WORDS) {
      fail(absl::StrFormat("address %u is outside shared memory (0 .. %u)", address,
                           ISO_SMM_WORDS - 1));
    }
    return memory_[address];
  }

  static void check_signal(int channel) {
    if (channel < kFirstSignal || channel > kLastSignal) {
      fail(absl::StrFormat("signal channel %d is not one of %d .. %d", channel, kFirstSignal,
                           kLastSignal));
    }
  }

  static void check_barrier(int channel, unsigned char mode) {
    if (channel < 0 || channel >= static_cast<int>(kApplicationBarriers)) {
      fail(absl::StrFormat("barrier channel %d is not 0 or 1", channel));
    }
    if (mode != ISO_BARRIER_WEAK && mode != ISO_BARRIER_STRONG) {
      fail(
          absl::StrFormat("barrier mode %u is neither ISO_BARRIER_WEAK (0) nor "
                          "ISO_BARRIER_STRONG (1)",
                          mode));
    }
  }

  static const char* mode_name(unsigned char mode) {
    return mode == ISO_BARRIER_WEAK ? "ISO_BARRIER_WEAK" : "ISO_BARRIER_STRONG";
  }

  // The next notice for the application, without blocking: signals on channels this node
  // registered, barriers on the application's channels, and every message.
  std::optional<notice> next_notice(iso::node& n) const {
    for (;;) {
      std::optional<notice> got = n.try_iso_receive();
      if (!got || got->what == notice::kind::message) return got;
      if (got->what == notice::kind::signal &&
          got->channel <= static_cast<channel_id>(kLastSignal) &&
          (signals_ & (1u << got->channel)) != 0) {
        return got;
      }
      if (got->what == notice::kind::barrier && got->channel < kApplicationBarriers) return got;
    }
  }

  unsigned park(detail::read_handle handle) {
    if (free_reads_.empty()) {
      reads_.emplace_back(std::move(handle));
      return static_cast<unsigned>(reads_.size() - 1);
    }
    const unsigned slot = free_reads_.back();
    free_reads_.pop_back();
    reads_[slot] = std::move(handle);
    return slot;
  }

  // Drops the read pending in `var`, if any: its value is no longer wanted.
  void forget(iso_var32& var) {
    if (var.state == kReadPending && var.slot < reads_.size() && reads_[var.slot]) {
      reads_[var.slot].reset();
      free_reads_.push_back(var.slot);
    }
    var.state = 0;
  }

  void close() {
    iso_.reset();
    last_message_.reset();
    last_notice_.reset();
    held_notice_.reset();
    reads_.clear();
    free_reads_.clear();
    node_.reset();
    fabric_.reset();
    state_ = state::closed;
  }

  // A process that ends without closing: the other nodes must not wait for it.
  void leave_at_exit() noexcept {
    if (state_ != state::open) return;
    try {
      const std::uint32_t rank = node_->id();
      std::shared_ptr<runtime::fabric> fabric = fabric_;
      close();
      fabric->mark_failed(rank);
    } catch (...) {  // nothing may escape at exit
    }
  }

  state state_ = state::never;
  bool exit_hook_ = false;
  bool closing_ = false;
  bool noniso_barrier_started_ = false;
  std::shared_ptr<runtime::fabric> fabric_;
  std::unique_ptr<iso::node> node_;
  std::optional<iso::isochron> iso_;
  shared_array<std::int32_t> memory_;
  std::optional<iso::message> last_message_;
  std::optional<notice> last_notice_;  // the last delivered (its bytes are the app's)
  std::optional<notice> held_notice_;  // taken by poll(), for the next iso_receive()
  std::vector<std::optional<detail::read_handle>> reads_;
  std::vector<unsigned> free_reads_;
  std::uint32_t signals_ = 0;
  std::optional<barrier_mode> barriers_[kApplicationBarriers];
};

ironman_api& api() { return ironman_api::instance(); }

}  // namespace
}  // namespace iso::runtime

using iso::runtime::api;
using iso::runtime::guarded;

extern "C" {

int ironman_open_net(void) {
  return guarded("open_net", [] { api().open_net(); });
}
int ironman_try_close_net(void) {
  return guarded("try_close_net", [] { return api().try_close_net(); });
}
int ironman_poll(void) {
  return guarded("poll", [] { return api().poll(); });
}
int ironman_get_node_number(const char* /*hostname*/) { return -1; }
int ironman_get_my_node_number(void) { return api().my_node(); }
int ironman_get_number_of_hosts(void) { return api().hosts(); }
int ironman_get_max_payload(void) { return api().max_payload(); }
int ironman_get_MBM_ver(void) { return 2; }
int ironman_get_SIU_state(void) { return FALSE; }
const char* ironman_last_error(void) { return iso::runtime::t_last_error.c_str(); }

int ironman_send(int target, const void* data, int size) {
  return guarded("send", [&] { api().send(target, data, size); });
}
int ironman_receive(noniso_mbm* m) {
  return guarded("receive", [&] { return api().receive(m); });
}
int ironman_initiate_barrier(void) {
  return guarded("initiate_barrier", [] { api().initiate_barrier(); });
}
int ironman_barrier_completed(void) {
  return guarded("barrier_completed", [] { return api().barrier_completed(); });
}

int ironman_iso_send(int target, const void* data, int size, int last_in_isochron) {
  return guarded("iso_send", [&] { api().iso_send(target, data, size, last_in_isochron); });
}
int ironman_iso_end(void) {
  return guarded("iso_end", [] { api().iso_end(); });
}
int ironman_iso_receive(iso_mbm* m) {
  return guarded("iso_receive", [&] { return api().iso_receive(m); });
}

int ironman_iso_read(shmem_addr_t shaddr, iso_var32* laddr, int last_in_isochron) {
  return guarded("iso_read", [&] { api().iso_read(shaddr, laddr, last_in_isochron); });
}
long ironman_iso_retrieve(iso_var32* laddr) {
  long value = 0;
  const int result = guarded("iso_retrieve", [&] { value = api().iso_retrieve(laddr); });
  return result == SUCCESS ? value : 0;
}
int ironman_iso_write(shmem_addr_t shaddr, long val, int last_in_isochron) {
  return guarded("iso_write", [&] { api().iso_write(shaddr, val, last_in_isochron); });
}
int ironman_iso_sched(shmem_addr_t shaddr, int last_in_isochron) {
  return guarded("iso_sched", [&] { api().iso_sched(shaddr, last_in_isochron); });
}
int ironman_iso_assign(shmem_addr_t shaddr, long val, int last_in_isochron) {
  return guarded("iso_assign", [&] { api().iso_assign(shaddr, val, last_in_isochron); });
}

int ironman_iso_register_signal(int channel) {
  return guarded("iso_register_signal", [&] { api().register_signal(channel); });
}
int ironman_iso_clear_signal(int channel) {
  return guarded("iso_clear_signal", [&] { api().clear_signal(channel); });
}
int ironman_iso_send_signal(int channel) {
  return guarded("iso_send_signal", [&] { api().send_signal(channel); });
}
int ironman_iso_register_barrier(int channel, unsigned char mode) {
  return guarded("iso_register_barrier", [&] { api().register_barrier(channel, mode); });
}
int ironman_iso_clear_barrier(int channel) {
  return guarded("iso_clear_barrier", [&] { api().clear_barrier(channel); });
}
int ironman_iso_barrier(int channel, unsigned char mode) {
  return guarded("iso_barrier", [&] { api().barrier(channel, mode); });
}

}  // extern "C"
