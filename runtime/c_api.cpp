// The classic isotach C API (include/iso/iso.h) on top of the C++ API.
//
// The classic calls have no handle, so this file keeps the process's node in one
// process-wide object (the only place in the runtime that does). Every extern "C" function
// is a thin wrapper: it runs the call on that object, turns an iso::error into its code and
// message (iso_last_error), and lets nothing escape into C.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/strings/str_format.h"
#include "iso/error.hpp"
#include "iso/iso.h"
#include "iso/isochron.hpp"
#include "iso/node.hpp"
#include "iso/shared.hpp"
#include "runtime/job.hpp"
#include "runtime/node_state.hpp"
#include "runtime/shmem_map.hpp"

namespace iso::runtime {
namespace {

// The C codes are iso::error_code's values: a code passes through without a table.
static_assert(ISO_E_CANCELLED == static_cast<int>(error_code::cancelled));
static_assert(ISO_E_UNKNOWN == static_cast<int>(error_code::unknown));
static_assert(ISO_E_INVALID_ARGUMENT == static_cast<int>(error_code::invalid_argument));
static_assert(ISO_E_DEADLINE_EXCEEDED == static_cast<int>(error_code::deadline_exceeded));
static_assert(ISO_E_NOT_FOUND == static_cast<int>(error_code::not_found));
static_assert(ISO_E_ALREADY_EXISTS == static_cast<int>(error_code::already_exists));
static_assert(ISO_E_PERMISSION_DENIED == static_cast<int>(error_code::permission_denied));
static_assert(ISO_E_RESOURCE_EXHAUSTED == static_cast<int>(error_code::resource_exhausted));
static_assert(ISO_E_FAILED_PRECONDITION == static_cast<int>(error_code::failed_precondition));
static_assert(ISO_E_ABORTED == static_cast<int>(error_code::aborted));
static_assert(ISO_E_OUT_OF_RANGE == static_cast<int>(error_code::out_of_range));
static_assert(ISO_E_UNIMPLEMENTED == static_cast<int>(error_code::unimplemented));
static_assert(ISO_E_INTERNAL == static_cast<int>(error_code::internal));
static_assert(ISO_E_UNAVAILABLE == static_cast<int>(error_code::unavailable));
static_assert(ISO_E_DATA_LOSS == static_cast<int>(error_code::data_loss));

// The memory layout the header promises: whole pages of the map, the 64-bit region after
// the 32-bit one.
static_assert(ISO_PAGE_SIZE == shmem_map::kPageVariables);
static_assert(ISO_MEM32_SIZE % ISO_PAGE_SIZE == 0 && ISO_MEM64_BASE % ISO_PAGE_SIZE == 0 &&
              ISO_MEM64_SIZE % ISO_PAGE_SIZE == 0 && ISO_MEM64_BASE >= ISO_MEM32_SIZE);
constexpr std::uint64_t kMemoryEnd = std::uint64_t{ISO_MEM64_BASE} + ISO_MEM64_SIZE;
constexpr std::uint64_t kMapPages = kMemoryEnd / ISO_PAGE_SIZE;

// A handle's state_: recognisable words rather than 1 and 2, so that an uninitialised handle
// is very unlikely to pass for a pending or done one.
constexpr std::uint32_t kEmpty = 0;
constexpr std::uint32_t kPending = 0x69736f50;  // "isoP"
constexpr std::uint32_t kDone = 0x69736f44;     // "isoD"

// What differs between iso_var32 and iso_var64.
template <typename Var>
struct var_traits;
template <>
struct var_traits<iso_var32> {
  static constexpr std::size_t kWidth = 4;
  static constexpr const char* kRead = "iso_read32";
  static constexpr const char* kInit = "ISO_VAR32_INIT";
};
template <>
struct var_traits<iso_var64> {
  static constexpr std::size_t kWidth = 8;
  static constexpr const char* kRead = "iso_read64";
  static constexpr const char* kInit = "ISO_VAR64_INIT";
};

[[noreturn]] void fail(error_code code, const std::string& message) {
  throw iso::error(code, message);
}

// The message of the latest failure on this thread (iso_last_error).
thread_local std::string t_last_error;

int record(const char* what, error_code code, std::string_view message) noexcept {
  try {
    t_last_error = absl::StrFormat("%s: %s", what, message);
  } catch (...) {
    t_last_error.clear();  // out of memory: the code still tells what happened
  }
  return static_cast<int>(code);
}

void run_deferred_deinit();

// Runs `body` and turns whatever it throws into a code; nothing may unwind into C. A leave
// that a handler run by `body` asked for happens before the call returns.
template <typename F>
int guarded(const char* what, F&& body) noexcept {
  try {
    body();
    run_deferred_deinit();
    return ISO_SUCCESS;
  } catch (const iso::error& e) {
    return record(what, e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return record(what, error_code::resource_exhausted, "out of memory");
  } catch (const std::exception& e) {
    return record(what, error_code::internal, e.what());
  } catch (...) {
    return record(what, error_code::unknown, "unknown exception");
  }
}

// A read in flight: the C handle names its entry by index and generation, so that a stale
// or forged handle is recognised instead of reaching the runtime's read table (which checks
// only with assertions).
struct read_entry {
  iso::detail::read_handle handle;
  std::uint32_t generation = 0;
  std::uint64_t isochron = 0;  // serial of the isochron that issued the read
  bool live = false;
};

// The allocation of `count` variables at classic address `first`, placed by `map`. With the
// default page size an allocation page is exactly one map page; with another
// (options::page_variables) it gets the union of the copysets of the map pages it overlaps, which
// keeps every named node a holder.
iso::placement placement_for(std::shared_ptr<const shmem_map> map, std::uint64_t first,
                             std::uint64_t count, std::uint32_t page_variables) {
  return iso::placement::per_page(
      [map = std::move(map), first, count, page_variables](std::uint64_t page) {
        const std::uint64_t lo = first + page * page_variables;
        const std::uint64_t hi = std::min(lo + page_variables, first + count);
        std::vector<iso::node_id> nodes;
        for (std::uint64_t p = lo / ISO_PAGE_SIZE; p <= (hi - 1) / ISO_PAGE_SIZE; ++p) {
          const std::vector<std::uint32_t> holders = map->copyset(p);
          nodes.insert(nodes.end(), holders.begin(), holders.end());
        }
        std::sort(nodes.begin(), nodes.end());
        nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
        return nodes;
      });
}

class classic_api {
 public:
  void init() {
    if (in_handler_) fail_in_handler();
    if (phase_ == phase::running) {
      fail(error_code::failed_precondition, "already initialised; call it once per process");
    }
    if (phase_ == phase::left) {
      fail(error_code::failed_precondition,
           "this process has already been in the job (iso_deinit or a failed iso_init); a "
           "process joins once");
    }
    // Whatever happens from here, a process joins once: the launcher's segment cannot be
    // joined again.
    phase_ = phase::left;
    absl::StatusOr<job_plan> plan = plan_job(iso::options{});
    if (!plan.ok()) detail::throw_status(plan.status());
    const std::uint32_t nodes = plan->env.size;
    if (plan->env.transport == transport_kind::inproc && nodes > 1) {
      fail(error_code::failed_precondition,
           absl::StrFormat("the C API needs one node per process, but this is an inproc job "
                           "(ISO_TRANSPORT=inproc) whose %u nodes would all live in this "
                           "process; launch it with --transport shm",
                           nodes));
    }
    // The map is read before joining: a bad file then fails every node alike, before any
    // of them waits for the others.
    auto map = std::make_shared<shmem_map>(kMapPages, nodes);
    if (const char* path = std::getenv("ISO_SHMEM_MAP"); path != nullptr && *path != '\0') {
      absl::StatusOr<shmem_map> loaded = shmem_map::load(path, kMapPages, nodes);
      if (!loaded.ok()) detail::throw_status(loaded.status());
      *map = *std::move(loaded);
    }
    absl::StatusOr<process_node> joined = join_process_node(*plan);
    if (!joined.ok()) detail::throw_status(joined.status());
    try {
      node_ = std::move(joined->self);
      // Before the start barrier: once a peer passes it, it may send to these ids.
      for (const auto& [id, fn] : handlers_) install(id, fn);
      node_->barrier();  // start: nobody sends before everyone can receive
      const std::uint32_t page_variables = node_->options().page_variables;
      base32_ = node_->allocate_raw(ISO_MEM32_SIZE, 4,
                                    placement_for(map, 0, ISO_MEM32_SIZE, page_variables));
      base64_ = node_->allocate_raw(
          ISO_MEM64_SIZE, 8, placement_for(map, ISO_MEM64_BASE, ISO_MEM64_SIZE, page_variables));
    } catch (...) {
      node_.reset();
      joined->fabric->mark_failed(joined->rank);  // the peers stop waiting for this node
      throw;
    }
    fabric_ = std::move(joined->fabric);
    rank_ = joined->rank;
    phase_ = phase::running;
    if (!exit_hook_) {
      // Registered after the runtime's own statics exist, so it runs before they go.
      std::atexit([] { instance().leave_at_exit(); });
      exit_hook_ = true;
    }
  }

  void deinit() {
    // A handler runs inside the node's execution of a pulse, where the end barrier cannot
    // wait: the report's lat.c leaves from its last message's handler, so the leave happens
    // when the call that ran the handler returns (run_deferred_deinit).
    if (in_handler_ && phase_ == phase::running) {
      deinit_deferred_ = true;
      return;
    }
    require_running();
    if (open_) fail(error_code::failed_precondition, "an isochron is open; call iso_end first");
    try {
      reads_.clear();  // pending handles become stale; values on their way are dropped
      free_reads_.clear();
      leave_job(*node_);
    } catch (...) {
      leave(true);
      left_failed_ = true;
      throw;
    }
    leave(false);
    left_cleanly_ = true;
  }

  // The leave a handler asked for, once the call that ran it is about to return; while an
  // isochron is open it waits for the call after iso_end.
  void run_deferred_deinit() {
    if (!deinit_deferred_ || in_handler_ || open_ || phase_ != phase::running) return;
    deinit_deferred_ = false;
    deinit();
  }

  // Whether this process left the job through a successful iso_deinit, or by a failed one.
  [[nodiscard]] bool left_cleanly() const { return left_cleanly_; }
  [[nodiscard]] bool left_failed() const { return left_failed_; }
  // The exit hook is running: the process is already ending.
  [[nodiscard]] bool exiting() const { return exiting_; }
  // The process is ending because a call failed (end_process): no clean leave at exit.
  void mark_ending_on_failure() { ending_on_failure_ = true; }

  [[nodiscard]] int node_id() const {
    return phase_ == phase::running ? static_cast<int>(node_->id()) : -1;
  }
  [[nodiscard]] int node_count() const {
    return phase_ == phase::running ? static_cast<int>(node_->count()) : -1;
  }

  void barrier() {
    require_running();
    if (open_) {
      fail(error_code::failed_precondition, "called inside an isochron; call iso_end first");
    }
    node_->barrier();
  }

  void counter_alloc(int holder, iso_counter* out) {
    require_running();
    if (out == nullptr) fail(error_code::invalid_argument, "out is NULL");
    if (open_) {
      fail(error_code::failed_precondition, "called inside an isochron; call iso_end first");
    }
    if (holder < 0) fail(error_code::invalid_argument, absl::StrFormat("holder %d", holder));
    const iso::counter c = node_->allocate_counter(static_cast<iso::node_id>(holder));
    *out = iso_counter{.holder = c.holder(), .index = c.index()};
  }

  void counter_fetch_add(iso_counter counter, std::uint64_t delta, std::uint64_t* before) {
    require_running();
    if (before == nullptr) fail(error_code::invalid_argument, "before is NULL");
    *before = node_->fetch_add(iso::counter(counter.holder, counter.index), delta).get();
  }

  void poll() {
    require_running();
    // One round, and one look at the job whether or not the round found work (never
    // blocks): node::poll() looks only when it finds nothing to do, and a node kept busy by
    // the others' traffic must learn too that the job failed. Both looks, when idle, were
    // one too many on the path of `while (1) iso_poll();`.
    runtime::event_loop& loop = detail::node_state::of(*node_).loop();
    bool did_work = false;
    detail::throw_if_error(loop.progress(did_work));
    detail::throw_if_error(loop.job_status());
  }

  // How often this node looked at the job's health.
  std::uint64_t job_checks() {
    require_running();
    return detail::node_state::of(*node_).loop().job_checks();
  }

  void start() {
    require_running();
    if (open_) {
      fail(error_code::failed_precondition,
           "an isochron is already open; isochrons do not nest (call iso_end first)");
    }
    open_.emplace(*node_);
    ++serial_;
  }

  void end() {
    require_running();
    if (!open_) {
      fail(error_code::failed_precondition, "no isochron is open; call iso_start first");
    }
    try {
      open_->end();
    } catch (...) {
      open_.reset();  // the runtime has closed it either way
      throw;
    }
    open_.reset();
  }

  template <typename Var>
  void read(std::uint64_t address, Var* var) {
    require_isochron();
    if (var == nullptr) fail(error_code::invalid_argument, "the read handle is NULL");
    bind(var, open_->read_raw(to_internal(address), var_traits<Var>::kWidth, 1));
  }

  // A read-modify-write: `old` gets the value before, as a read's handle.
  template <typename Var>
  void read_modify_write(iso::rmw_op op, std::uint64_t address,
                         std::span<const std::uint64_t> operands, Var* old) {
    require_isochron();
    if (old == nullptr) fail(error_code::invalid_argument, "the handle for the old value is NULL");
    bind(old,
         open_->read_modify_write_raw(op, to_internal(address), var_traits<Var>::kWidth, operands));
  }

  // Makes `var` the handle of the new read `h`.
  template <typename Var>
  void bind(Var* var, iso::detail::read_handle h) {
    // Only now, when the new read exists: a failed read leaves the handle as it was.
    if (var->state_ == kPending) drop(var->slot_, var->generation_);
    std::uint32_t index = 0;
    if (free_reads_.empty()) {
      index = static_cast<std::uint32_t>(reads_.size());
      reads_.emplace_back();
    } else {
      index = free_reads_.back();
      free_reads_.pop_back();
    }
    read_entry& e = reads_[index];
    e.handle = std::move(h);
    if (++e.generation == 0) e.generation = 1;  // 0 never names a live read
    e.isochron = serial_;
    e.live = true;
    *var = Var{};
    var->state_ = kPending;
    var->slot_ = index;
    var->generation_ = e.generation;
  }

  void write(std::uint64_t address, std::size_t width, std::uint64_t value) {
    require_isochron();
    open_->write_raw(to_internal(address), width, std::span(&value, 1));
  }

  void sched(std::uint64_t address, std::size_t width) {
    require_isochron();
    open_->sched_raw(to_internal(address), width);
  }

  void assign(std::uint64_t address, std::size_t width, std::uint64_t value) {
    require_isochron();
    open_->assign_raw(to_internal(address), width, value);
  }

  // The read's value; blocks until it is here.
  template <typename Var>
  std::uint64_t wait(Var* var) {
    if (var == nullptr) fail(error_code::invalid_argument, "the read handle is NULL");
    if (var->state_ == kDone) return var->value_;
    require_running();
    read_entry& e = pending_entry(var);
    if (open_ && e.isochron == serial_) {
      fail(error_code::failed_precondition,
           "the read's isochron is still open, so its value cannot arrive; call iso_end first");
    }
    const std::uint64_t bits = e.handle.wait()[0];
    drop(var->slot_, var->generation_);
    var->state_ = kDone;
    var->value_ = static_cast<decltype(var->value_)>(bits);
    return var->value_;
  }

  template <typename Var>
  bool ready(Var* var) {
    if (var == nullptr) fail(error_code::invalid_argument, "the read handle is NULL");
    if (var->state_ == kDone) return true;
    require_running();
    read_entry& e = pending_entry(var);
    if (open_ && e.isochron == serial_) return false;
    return e.handle.ready();
  }

  template <typename Var>
  void release(Var* var) {
    if (in_handler_) fail_in_handler();
    if (var == nullptr) fail(error_code::invalid_argument, "the read handle is NULL");
    if (var->state_ != kEmpty && var->state_ != kPending && var->state_ != kDone) {
      fail_not_a_handle<Var>();
    }
    if (var->state_ == kPending) drop(var->slot_, var->generation_);
    *var = Var{};
  }

  // Sets (or, with NULL, clears) handler `id` and returns the previous one.
  iso_handler* set_handler(int id, iso_handler* fn) {
    if (in_handler_) fail_in_handler();
    if (id < 0 || id >= MAX_ISO_HANDLERS) {
      fail(error_code::invalid_argument,
           absl::StrFormat("handler id %d is outside 0..%d (MAX_ISO_HANDLERS-1)", id,
                           MAX_ISO_HANDLERS - 1));
    }
    if (phase_ == phase::left) fail_left();
    const auto key = static_cast<std::uint32_t>(id);
    iso_handler* previous = nullptr;
    if (auto it = handlers_.find(key); it != handlers_.end()) previous = it->second;
    if (fn == nullptr) {
      handlers_.erase(key);
    } else {
      handlers_[key] = fn;
    }
    // A cleared id keeps an installed handler that fails the node: the C++ runtime has no
    // way to unregister, and a message for it must end the job (Regehr report, B.5).
    if (phase_ == phase::running) install(key, fn);
    return previous;
  }

  void send(int to, int handler, const void* data, std::size_t size) {
    require_isochron();
    if (to < 0 || static_cast<std::uint32_t>(to) >= node_->count()) {
      fail(error_code::invalid_argument, absl::StrFormat("message to node %d: the job has nodes "
                                                         "0..%u",
                                                         to, node_->count() - 1));
    }
    if (handler < 0 || handler >= MAX_ISO_HANDLERS) {
      fail(error_code::invalid_argument,
           absl::StrFormat("handler id %d is outside 0..%d (MAX_ISO_HANDLERS-1)", handler,
                           MAX_ISO_HANDLERS - 1));
    }
    if (data == nullptr && size != 0) {
      fail(error_code::invalid_argument,
           absl::StrFormat("the data pointer is NULL but the size is %u", size));
    }
    if (size > MAX_ISO_MSG_SIZE) {
      fail(error_code::out_of_range,
           absl::StrFormat("message of %u bytes to node %d exceeds MAX_ISO_MSG_SIZE (%u bytes)",
                           size, to, MAX_ISO_MSG_SIZE));
    }
    const auto* bytes = static_cast<const std::byte*>(data);
    open_->send(static_cast<iso::node_id>(to), static_cast<iso::handler_id>(handler),
                std::span<const std::byte>(bytes, size));
  }

  std::vector<std::uint32_t> copyset(std::uint64_t address) {
    require_running();
    absl::StatusOr<const page_info*> page =
        detail::node_state::of(*node_).smm().pages().find(to_internal(address));
    if (!page.ok()) detail::throw_status(page.status());
    return (*page)->copyset;
  }

  static classic_api& instance() {
    // Never destroyed: the node is torn down by iso_deinit or the exit hook, at a time when
    // the runtime's own statics still exist.
    static classic_api* const api = new classic_api;
    return *api;
  }

 private:
  enum class phase { before, running, left };

  [[noreturn]] void fail_in_handler() const {
    fail(error_code::failed_precondition,
         "called inside a message handler; a handler may call only iso_node_id, "
         "iso_node_count and iso_last_error");
  }
  [[noreturn]] void fail_left() const {
    fail(error_code::failed_precondition,
         "this process has left the job (iso_deinit, or a failed iso_init)");
  }
  template <typename Var>
  [[noreturn]] void fail_not_a_handle() const {
    fail(error_code::invalid_argument,
         absl::StrFormat("not a read handle (uninitialised?); initialise it with %s or fill it "
                         "with %s",
                         var_traits<Var>::kInit, var_traits<Var>::kRead));
  }

  void require_running() const {
    if (in_handler_) fail_in_handler();
    if (phase_ == phase::before) {
      fail(error_code::failed_precondition, "called before iso_init; call iso_init first");
    }
    if (phase_ == phase::left) fail_left();
  }

  void require_isochron() const {
    require_running();
    if (!open_) {
      fail(error_code::failed_precondition, "called outside an isochron; call iso_start first");
    }
  }

  // Classic address -> isotach address. With the default page size both are the same, so
  // the C++ API's messages name the address the program used.
  [[nodiscard]] iso::address to_internal(std::uint64_t address) const {
    if (address < ISO_MEM32_SIZE) return base32_ + address;
    if (address >= ISO_MEM64_BASE && address < kMemoryEnd) {
      return base64_ + (address - ISO_MEM64_BASE);
    }
    fail(error_code::out_of_range,
         absl::StrFormat("address %u is outside isotach memory (32-bit variables at 0..%u, "
                         "64-bit at %u..%u)",
                         address, ISO_MEM32_SIZE - 1, ISO_MEM64_BASE, kMemoryEnd - 1));
  }

  template <typename Var>
  read_entry& pending_entry(const Var* var) {
    if (var->state_ == kEmpty) {
      fail(error_code::invalid_argument,
           absl::StrFormat("the handle holds no read; fill it with %s first",
                           var_traits<Var>::kRead));
    }
    if (var->state_ != kPending) fail_not_a_handle<Var>();
    if (var->slot_ >= reads_.size() || !reads_[var->slot_].live ||
        reads_[var->slot_].generation != var->generation_) {
      fail(error_code::invalid_argument,
           "stale read handle: its read was already taken or released, through this handle or "
           "a copy of it");
    }
    return reads_[var->slot_];
  }

  // Releases the read (index, generation) if it is still live.
  void drop(std::uint32_t index, std::uint32_t generation) {
    if (index >= reads_.size() || !reads_[index].live || reads_[index].generation != generation) {
      return;
    }
    read_entry& e = reads_[index];
    e.handle = iso::detail::read_handle();  // frees the runtime's slot
    e.live = false;
    free_reads_.push_back(index);
  }

  void install(std::uint32_t id, iso_handler* fn) {
    node_->set_handler(id, [this, id, fn](iso::node_id source, std::span<const std::byte> payload) {
      if (fn == nullptr) {
        // Regehr report, B.5: the job ends with a message. Not an exception: that would
        // stop the node only through the return code of some later call, which a classic
        // program does not look at. The peers learn from the fabric; nothing of this
        // node's state may be torn down from inside its own pulse, hence _Exit.
        std::fprintf(stderr,
                     "iso: a message from node %u for handler %u, which is not set on node %u "
                     "(iso_set_handler cleared it); the job ends\n",
                     source, id, rank_);
        std::fflush(stdout);
        std::fflush(stderr);
        if (fabric_ != nullptr) fabric_->mark_failed(rank_);
        std::_Exit(EXIT_FAILURE);
      }
      // Marks the handler's extent, so that the iso_* calls it may not make are refused
      // rather than re-entering the runtime from inside its execution of the pulse.
      struct in_handler_scope {
        explicit in_handler_scope(bool& flag) : flag_(flag) { flag_ = true; }
        ~in_handler_scope() { flag_ = false; }
        bool& flag_;
      } scope(in_handler_);
      // The classic handler takes `void*`: it gets the runtime's copy of the payload, which
      // nothing reads after the handler returns.
      fn(static_cast<int>(source),
         payload.empty() ? nullptr : const_cast<std::byte*>(payload.data()),
         static_cast<int>(payload.size()));
    });
  }

  // Tears the node down. `failed`: it leaves without the end barrier, so it tells the peers,
  // which would otherwise wait for it until their timeouts.
  void leave(bool failed) {
    reads_.clear();
    free_reads_.clear();
    open_.reset();
    if (failed) fabric_->mark_failed(rank_);
    node_.reset();
    fabric_.reset();
    phase_ = phase::left;
  }

  // A node that returns from main without iso_deinit leaves as iso_deinit would: the
  // report calls that bad form, not an error, and its lat.c does it. Inside a handler or an
  // open isochron, or after a failed call, it leaves as a failed node instead (the others
  // fail: nothing is lost). When the clean leave itself fails, the process's exit status
  // becomes 1, so that the failure is never lost.
  void leave_at_exit() {
    if (phase_ != phase::running) return;
    exiting_ = true;
    const char* why = nullptr;
    if (in_handler_) {
      why = "exits inside a message handler";
    } else if (open_) {
      why = "exits with an isochron open";
    } else if (ending_on_failure_) {
      why = "ends after a failed call";
    }
    std::string failure;
    if (why == nullptr) {
      deinit_deferred_ = false;
      // Not through guarded(): the thread's last-error string may already be destroyed.
      try {
        deinit();
        return;
      } catch (const std::exception& e) {
        failure = e.what();
      } catch (...) {
        failure = "unknown exception";
      }
      std::fprintf(stderr, "iso: node %u could not leave the job at exit: %s\n", rank_,
                   failure.c_str());
      std::fflush(nullptr);
      std::_Exit(EXIT_FAILURE);
    }
    std::fprintf(stderr, "iso: node %u %s; it leaves the job as a failed node\n", rank_, why);
    in_handler_ = false;
    leave(true);
  }

  phase phase_ = phase::before;
  std::shared_ptr<runtime::fabric> fabric_;
  std::uint32_t rank_ = 0;
  std::unique_ptr<iso::node> node_;
  std::optional<iso::isochron> open_;
  std::uint64_t serial_ = 0;  // isochrons started so far: the open one's serial
  iso::address base32_ = 0;
  iso::address base64_ = 0;
  std::vector<read_entry> reads_;
  std::vector<std::uint32_t> free_reads_;
  std::map<std::uint32_t, iso_handler*> handlers_;
  bool in_handler_ = false;
  bool exit_hook_ = false;
  bool deinit_deferred_ = false;    // iso_deinit called in a handler
  bool left_cleanly_ = false;       // a successful iso_deinit
  bool ending_on_failure_ = false;  // end_process: the exit hook must not wait for anyone
  bool left_failed_ = false;        // iso_deinit failed: the node left as a failed one
  bool exiting_ = false;            // the exit hook runs
};

classic_api& api() { return classic_api::instance(); }

void run_deferred_deinit() { api().run_deferred_deinit(); }

// Ends the process for a classic call that failed and cannot return a code: the message on
// stderr, exit status 1. The exit hook leaves the job as a failed node, so the others stop.
[[noreturn]] void end_process() {
  if (api().exiting()) {  // a failure inside the exit hook's leave: exit() may not nest
    std::fputs("iso: a call failed while this node left the job at exit\n", stderr);
    std::fflush(nullptr);
    std::_Exit(EXIT_FAILURE);
  }
  api().mark_ending_on_failure();
  std::fprintf(stderr, "%s\n", t_last_error.c_str());
  std::fflush(stderr);
  std::exit(EXIT_FAILURE);
}

template <typename Var>
int wait_into(const char* what, Var* var, decltype(Var::value_)* value) {
  return guarded(what, [&] {
    if (value == nullptr) fail(error_code::invalid_argument, "the value pointer is NULL");
    *value = static_cast<decltype(Var::value_)>(api().wait(var));
  });
}

// The classic read_iso_var32/64: the value, signed, or the end of the process (the call has
// no way to report a failure, and a 0 would be a silently wrong value).
template <typename Signed, typename Var>
Signed read_var(const char* what, Var* var) {
  decltype(Var::value_) value = 0;
  if (wait_into(what, var, &value) != ISO_SUCCESS) end_process();
  return static_cast<Signed>(static_cast<std::make_signed_t<decltype(Var::value_)>>(value));
}

template <typename Var>
int ready_of(const char* what, Var* var) {
  bool ready = false;
  const int code = guarded(what, [&] { ready = api().ready(var); });
  if (code != ISO_SUCCESS) return -code;
  return ready ? 1 : 0;
}

}  // namespace

absl::StatusOr<std::uint64_t> c_api_job_checks() {
  try {
    return api().job_checks();
  } catch (const iso::error& e) {
    return absl::Status(static_cast<absl::StatusCode>(e.code()), e.what());
  }
}

absl::StatusOr<std::vector<std::uint32_t>> c_api_copyset(std::uint64_t address) {
  try {
    return api().copyset(address);
  } catch (const iso::error& e) {
    return absl::Status(static_cast<absl::StatusCode>(e.code()), e.what());
  }
}

}  // namespace iso::runtime

using iso::runtime::api;
using iso::runtime::guarded;

extern "C" {

void iso_init(void) {
  if (guarded("iso_init", [] { api().init(); }) != ISO_SUCCESS) iso::runtime::end_process();
}
int iso_try_init(void) {
  return guarded("iso_try_init", [] { api().init(); });
}
int iso_deinit(void) {
  return guarded("iso_deinit", [] { api().deinit(); });
}
int iso_node_id(void) { return api().node_id(); }
int iso_node_count(void) { return api().node_count(); }
int iso_barrier(void) {
  return guarded("iso_barrier", [] { api().barrier(); });
}
int iso_counter_alloc(int holder, iso_counter* out) {
  return guarded("iso_counter_alloc", [&] { api().counter_alloc(holder, out); });
}
int iso_counter_fetch_add(iso_counter counter, std::uint64_t delta, std::uint64_t* before) {
  return guarded("iso_counter_fetch_add", [&] { api().counter_fetch_add(counter, delta, before); });
}
int iso_poll(void) {
  // `while (1) iso_poll();` is how a classic node waits for the end; once it has left the
  // job (iso_deinit, also from a handler) nothing can come any more, so that is the end.
  if (api().left_cleanly()) {
    std::fflush(nullptr);
    if (api().exiting()) std::_Exit(EXIT_SUCCESS);  // exit() may not nest
    std::exit(EXIT_SUCCESS);
  }
  if (api().left_failed()) {
    iso::runtime::record("iso_poll", iso::error_code::aborted,
                         "this node left the job by a failed iso_deinit");
    iso::runtime::end_process();
  }
  const int code = guarded("iso_poll", [] { api().poll(); });
  // A classic program polls in `while (1) iso_poll();` and never looks at the code: once
  // the job has failed, that loop would spin forever, so the node ends instead.
  if (code != ISO_SUCCESS && code != ISO_E_FAILED_PRECONDITION) iso::runtime::end_process();
  return code;
}

int iso_start(void) {
  return guarded("iso_start", [] { api().start(); });
}
int iso_end(void) {
  return guarded("iso_end", [] { api().end(); });
}

// A 32-bit variable keeps the low 32 bits of a `long`; a 64-bit one all of a `long long`.
int iso_read32(shmem_addr_t address, iso_var32* var) {
  return guarded("iso_read32", [&] { api().read(address, var); });
}
int iso_read64(shmem_addr_t address, iso_var64* var) {
  return guarded("iso_read64", [&] { api().read(address, var); });
}
int iso_fetch_add32(shmem_addr_t address, long delta, iso_var32* old) {
  const std::uint64_t operand = static_cast<std::uint32_t>(delta);
  return guarded("iso_fetch_add32", [&] {
    api().read_modify_write(iso::rmw_op::fetch_add, address, std::span(&operand, 1), old);
  });
}
int iso_fetch_add64(shmem_addr_t address, long long delta, iso_var64* old) {
  const std::uint64_t operand = static_cast<std::uint64_t>(delta);
  return guarded("iso_fetch_add64", [&] {
    api().read_modify_write(iso::rmw_op::fetch_add, address, std::span(&operand, 1), old);
  });
}
int iso_swap32(shmem_addr_t address, long value, iso_var32* old) {
  const std::uint64_t operand = static_cast<std::uint32_t>(value);
  return guarded("iso_swap32", [&] {
    api().read_modify_write(iso::rmw_op::exchange, address, std::span(&operand, 1), old);
  });
}
int iso_swap64(shmem_addr_t address, long long value, iso_var64* old) {
  const std::uint64_t operand = static_cast<std::uint64_t>(value);
  return guarded("iso_swap64", [&] {
    api().read_modify_write(iso::rmw_op::exchange, address, std::span(&operand, 1), old);
  });
}
int iso_compare_swap32(shmem_addr_t address, long expected, long desired, iso_var32* old) {
  const std::uint64_t operands[2] = {static_cast<std::uint32_t>(expected),
                                     static_cast<std::uint32_t>(desired)};
  return guarded("iso_compare_swap32", [&] {
    api().read_modify_write(iso::rmw_op::compare_exchange, address, operands, old);
  });
}
int iso_compare_swap64(shmem_addr_t address, long long expected, long long desired,
                       iso_var64* old) {
  const std::uint64_t operands[2] = {static_cast<std::uint64_t>(expected),
                                     static_cast<std::uint64_t>(desired)};
  return guarded("iso_compare_swap64", [&] {
    api().read_modify_write(iso::rmw_op::compare_exchange, address, operands, old);
  });
}
int iso_write32(shmem_addr_t address, long value) {
  return guarded("iso_write32",
                 [&] { api().write(address, 4, static_cast<std::uint32_t>(value)); });
}
int iso_write64(shmem_addr_t address, long long value) {
  return guarded("iso_write64",
                 [&] { api().write(address, 8, static_cast<std::uint64_t>(value)); });
}
int iso_sched(shmem_addr_t address) {
  return guarded("iso_sched", [&] { api().sched(address, 4); });
}
int iso_sched64(shmem_addr_t address) {
  return guarded("iso_sched64", [&] { api().sched(address, 8); });
}
int iso_assign32(shmem_addr_t address, long value) {
  return guarded("iso_assign32",
                 [&] { api().assign(address, 4, static_cast<std::uint32_t>(value)); });
}
int iso_assign64(shmem_addr_t address, long long value) {
  return guarded("iso_assign64",
                 [&] { api().assign(address, 8, static_cast<std::uint64_t>(value)); });
}

long read_iso_var32(iso_var32* var) { return iso::runtime::read_var<long>("read_iso_var32", var); }
long long read_iso_var64(iso_var64* var) {
  return iso::runtime::read_var<long long>("read_iso_var64", var);
}
int iso_var_wait32(iso_var32* var, uint32_t* value) {
  return iso::runtime::wait_into("iso_var_wait32", var, value);
}
int iso_var_wait64(iso_var64* var, uint64_t* value) {
  return iso::runtime::wait_into("iso_var_wait64", var, value);
}
int iso_var_ready32(iso_var32* var) { return iso::runtime::ready_of("iso_var_ready32", var); }
int iso_var_ready64(iso_var64* var) { return iso::runtime::ready_of("iso_var_ready64", var); }
int iso_var_release32(iso_var32* var) {
  return guarded("iso_var_release32", [&] { api().release(var); });
}
int iso_var_release64(iso_var64* var) {
  return guarded("iso_var_release64", [&] { api().release(var); });
}

iso_handler* iso_set_handler(int handler_id, iso_handler* fn) {
  iso_handler* previous = nullptr;
  guarded("iso_set_handler", [&] { previous = api().set_handler(handler_id, fn); });
  return previous;
}
int iso_send_msg(int node, int handler_id, const void* data, size_t size) {
  return guarded("iso_send_msg", [&] { api().send(node, handler_id, data, size); });
}

const char* iso_last_error(void) { return iso::runtime::t_last_error.c_str(); }

}  // extern "C"
