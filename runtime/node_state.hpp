// What an iso::node is made of on the inside: its bootstrap, its emulated NIC, its event
// loop and the units registered with it (the shared memory manager, plain messages), and
// the plain messages it has received but not yet handed out.
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "iso/node.hpp"
#include "nicfw/engine.hpp"
#include "runtime/bootstrap/bootstrap.hpp"
#include "runtime/collective_digest.hpp"
#include "runtime/counters/fetch_add_client.hpp"
#include "runtime/fabric/fabric.hpp"
#include "runtime/fibers/fiber_scheduler.hpp"
#include "runtime/fork/fork_service.hpp"
#include "runtime/messages/plain_messages.hpp"
#include "runtime/objects/object_link.hpp"
#include "runtime/objects/object_table.hpp"
#include "runtime/onesided/remote_store_client.hpp"
#include "runtime/ordered/isotach_groups.hpp"
#include "runtime/ordered/sequencer_groups.hpp"
#include "runtime/progress/core_binding.hpp"
#include "runtime/progress/event_loop.hpp"
#include "runtime/smm/shared_memory_manager.hpp"

namespace iso::nicfw {
class remote_store_service;
}  // namespace iso::nicfw

namespace iso::detail {

// The handler id of node::quiet's fences, reserved for the runtime: a fence's payload names
// the read slot its issuer waits on, and the handler answers there.
inline constexpr handler_id kQuietHandler = 0xffffffffu;
// Handler ids the runtime keeps for itself: node::quiet's, and ordered groups' batches
// (runtime::kOrderedGroupHandler).
[[nodiscard]] constexpr bool reserved_handler(handler_id id) {
  return id == kQuietHandler || id == runtime::kOrderedGroupHandler;
}

struct window_id_and_size {
  std::uint32_t id = 0;
  std::size_t bytes = 0;
};

class node_state {
 public:
  // `windows`: every node's memory window, by node id (empty spans where there is none);
  // `waiting`: how the node waits for others (runtime/progress/wait_choice.hpp).
  node_state(std::unique_ptr<runtime::bootstrap> boot, std::unique_ptr<nicfw::engine> nic,
             const iso::options& opts, const std::vector<std::span<std::byte>>& windows,
             runtime::waiter_policy waiting);
  ~node_state();

  // Builds the public object around a state (node's constructor is private).
  static std::unique_ptr<node> make_node(std::unique_ptr<node_state> state);
  static node_state& of(node& n) { return *n.state_; }

  [[nodiscard]] node_id id() const { return boot_->rank(); }
  [[nodiscard]] std::uint32_t count() const { return boot_->size(); }
  [[nodiscard]] const iso::options& options() const { return options_; }
  // Where the job runs (node::status()); set by whoever built the node from its fabric.
  [[nodiscard]] const runtime::fabric_description& fabric() const { return fabric_; }
  void set_fabric(runtime::fabric_description description) { fabric_ = std::move(description); }
  // How the node waits, in words (node_status::waiting).
  [[nodiscard]] const std::string& waiting() const { return waiting_; }
  void set_waiting(std::string how) { waiting_ = std::move(how); }
  // Where this node's thread runs (node_status::binding), bound until the node ends.
  [[nodiscard]] const std::string& binding() const { return binding_.where(); }
  void set_binding(runtime::thread_binding bound) { binding_ = std::move(bound); }
  [[nodiscard]] std::size_t max_message_size() const;
  [[nodiscard]] runtime::bootstrap& boot() { return *boot_; }
  [[nodiscard]] runtime::shared_memory_manager& smm() { return smm_; }
  [[nodiscard]] runtime::event_loop& loop() { return loop_; }
  // The node's fibers (iso/fiber.hpp); the body runs as fiber "main".
  [[nodiscard]] runtime::fiber_scheduler& fibers() { return fibers_; }
  // Fork (iso/fork.hpp): procedures registered here, forks made and served.
  [[nodiscard]] runtime::fork_service& forks() { return forks_; }
  // The NIC's fetch-and-add counters (nicfw/fetch_add_service.hpp).
  [[nodiscard]] runtime::fetch_add_client& counters() { return counters_; }
  // The NIC's remote store (nicfw/remote_store_service.hpp).
  [[nodiscard]] runtime::remote_store_client& store() { return store_; }
  // Sequenced ordered groups (runtime/ordered/sequencer_groups.hpp), and the NIC service
  // under them; the id the next ordered group of this node gets (every node builds the
  // job's groups in one order, so ids agree).
  [[nodiscard]] runtime::sequencer_groups& sequenced() { return *sequenced_; }
  [[nodiscard]] nicfw::multicast_service& multicast() { return *multicast_; }
  // Ordered groups in the isotach order (runtime/ordered/isotach_groups.hpp).
  [[nodiscard]] runtime::isotach_groups& isotach_ordered() { return *isotach_ordered_; }
  std::uint32_t next_group_id() { return groups_++; }
  // Shared objects (runtime/objects/object_table.hpp), built by the job's first collective
  // object creation (so on every node at the same point, with the same group id), and the
  // link their handles keep (runtime/objects/object_link.hpp).
  [[nodiscard]] runtime::object_table& objects();
  // Whether the table is built (the node took part in an object creation or registration).
  [[nodiscard]] bool has_objects() const { return objects_ != nullptr; }
  [[nodiscard]] const std::shared_ptr<object_link>& objects_link() { return objects_link_; }
  // Dropped object calls that must go out again (runtime/objects/dropped_calls.cpp): when
  // `leaving` the job, every one of them, waiting for the answers still due; otherwise
  // those that can go out without waiting, and only outside an isochron, guard or body (a
  // poll). Nothing on a node without objects.
  [[nodiscard]] absl::Status settle_dropped_objects(bool leaving);
  [[nodiscard]] nicfw::engine& nic() { return *nic_; }
  [[nodiscard]] std::size_t messages_waiting() const { return inbox_.size(); }
  // What the node's read handles share with it (see detail::node_link).
  [[nodiscard]] node_link* link() const { return link_; }
  void set_link(node_link* link) { link_ = link; }
  // Isochrons: the serial of the open one (or of the last one), counted from 1, so that a
  // read can tell whether its own isochron is still open.
  std::uint64_t begin_isochron() { return ++isochrons_; }
  [[nodiscard]] std::uint64_t isochron_serial() const { return isochrons_; }
  // An isochron belongs to the fiber that opened it, from begin to the end of its end()
  // (which may wait for credits, while the isochron builder still holds it). Another fiber
  // that opens one, or makes a call that needs none open, waits until then.
  // open_isochron(): waits for another fiber's isochron, then begins one (and counts it);
  // close_isochron(): ends it and frees the node's isochron for the other fibers.
  [[nodiscard]] absl::Status open_isochron();
  [[nodiscard]] absl::Status close_isochron();
  // Waits while another fiber of this node has an isochron open.
  [[nodiscard]] absl::Status await_other_fibers_isochron();
  // FailedPrecondition, naming `what`, where this node may not wait (a message handler, an
  // object operation's guard or body: event_loop::forbid_progress).
  [[nodiscard]] absl::Status refuse_where_waits_are_forbidden(std::string_view what) const;
  // Whether the running fiber has an isochron open.
  [[nodiscard]] bool own_isochron_open() const {
    return isochron_owner_ != nullptr && isochron_owner_ == &fibers_.current();
  }
  // The node's failure, once it has failed (OK before): a failed pulse, or an isochron lost
  // at scope exit. From then on every call that waits reports it.
  [[nodiscard]] const absl::Status& health() const { return loop_.failure(); }
  void fail(absl::Status status) { loop_.fail(std::move(status)); }

  // A collective call's turn on this node, from before it changes anything here to the end
  // of its rendezvous: the nodes count collective calls per node, and a call of another
  // fiber in between would take an address (an id, a rendezvous) out of the order the other
  // nodes take them in. Released when destroyed.
  class collective_turn {
   public:
    explicit collective_turn(bool& held) : held_(&held) { held = true; }
    collective_turn(collective_turn&& other) noexcept
        : held_(std::exchange(other.held_, nullptr)) {}
    collective_turn(const collective_turn&) = delete;
    collective_turn& operator=(const collective_turn&) = delete;
    collective_turn& operator=(collective_turn&&) = delete;
    ~collective_turn() {
      if (held_ != nullptr) *held_ = false;
    }

   private:
    bool* held_;
  };
  // usable_for_collective(), then this node's turn (waiting while another fiber's collective
  // call runs). FailedPrecondition after a rendezvous that ran out of time, unless that was
  // a barrier() and `what` is barrier() again: the node's arrival there stands.
  [[nodiscard]] absl::StatusOr<collective_turn> begin_collective(const char* what);
  // A barrier that keeps this node serving others while it waits, and orders isotach
  // memory: every isochron issued anywhere before it has executed everywhere after it.
  [[nodiscard]] absl::Status barrier();
  // barrier() as the job's end: a barrier() another node makes there disagrees with it.
  [[nodiscard]] absl::Status end_barrier();
  // The barrier without the memory ordering: every node has arrived; serves others while
  // it waits. `digest` names the collective call this node makes there (`call`, for
  // messages; runtime/collective_digest.hpp): nodes that arrive with different ones fail.
  // The caller holds the turn (begin_collective). DeadlineExceeded after
  // options::barrier_timeout: the arrival stands (it cannot be taken back); a barrier()
  // called again waits for the same one.
  [[nodiscard]] absl::Status rendezvous(const collective_turn& turn, std::uint64_t digest,
                                        std::string_view call);
  // Collective allocation; returns once every node has made it, so no node can operate on
  // pages another does not know yet.
  [[nodiscard]] absl::StatusOr<std::uint64_t> allocate(std::uint64_t count, std::uint8_t width,
                                                       const runtime::copyset_rule& rule);
  [[nodiscard]] absl::Status send(node_id to, std::span<const std::byte> bytes);
  [[nodiscard]] absl::StatusOr<message> receive();
  [[nodiscard]] absl::StatusOr<std::optional<message>> try_receive();
  [[nodiscard]] absl::StatusOr<notice> iso_receive();
  // A received message the application dropped before the next receive: its place in the
  // NIC's queue, and the sender's credits, are free again.
  void drop_in_place(message::holder* h);
  [[nodiscard]] absl::StatusOr<std::optional<notice>> try_iso_receive();
  // This node has passed the job's end barrier: its process may end from now on without
  // the other nodes taking it for failed.
  void leave() { boot_->leave(); }
  // node::quiet(): until every isochron this node issued has executed on every node.
  [[nodiscard]] absl::Status quiet();
  // OK, or why a call that waits for this node's isochrons cannot be made now: the node
  // has failed, an isochron is open, or an object's state is being inspected
  // (FailedPrecondition naming `what`). Waits first while another fiber has one open.
  [[nodiscard]] absl::Status usable_outside_isochron(const char* what);
  // usable_outside_isochron(), and not where this node may not wait: for collective calls
  // (and quiet()), which every node must make alike, refused before they change anything.
  [[nodiscard]] absl::Status usable_for_collective(const char* what);
  // Runs `op` (which adds one operation) in an isochron of its own.
  [[nodiscard]] absl::Status one_op_isochron(absl::FunctionRef<absl::Status()> op);

  // NIC counters and remote store (runtime/onesided.cpp): collective allocation, and the
  // checks the public API makes before anything is sent.
  [[nodiscard]] absl::StatusOr<counter> allocate_counter(node_id holder);
  [[nodiscard]] absl::Status check_counter(const counter& c) const;
  // The word of a checked counter when this node can add to it with a CPU atomic (its
  // holder's window is mapped here: the same host); null when only the NIC can.
  [[nodiscard]] std::atomic<std::uint64_t>* same_host_counter(const counter& c) const {
    if (!same_host_counters_ || c.holder() >= counter_areas_.size()) return nullptr;
    const std::span<std::atomic<std::uint64_t>> area = counter_areas_[c.holder()];
    return c.index() < area.size() ? &area[c.index()] : nullptr;
  }
  // Off: every fetch_add goes through the NIC, as from another host (for tests that mix the
  // two paths on one counter).
  void set_same_host_counters(bool on) { same_host_counters_ = on; }
  [[nodiscard]] absl::StatusOr<window_id_and_size> register_window(std::size_t bytes);
  [[nodiscard]] absl::Status check_access(const char* call, std::uint32_t window, node_id target,
                                          std::size_t offset, std::size_t bytes) const;
  [[nodiscard]] std::span<std::byte> local_window(std::uint32_t window) {
    return window_memory_[window];
  }

 private:
  // barrier() and end_barrier(): `kind` goes into the digest, `call` into messages.
  [[nodiscard]] absl::Status ordered_barrier(runtime::collective_digest::kind kind,
                                             const char* call);

  // First: the thread gets its processors back only once everything else is gone.
  runtime::thread_binding binding_;
  runtime::fabric_description fabric_;
  std::string waiting_;
  // Windows' memory: first, so that it outlives the NIC, whose thread writes into it.
  std::vector<std::vector<std::byte>> window_memory_;
  std::unique_ptr<runtime::bootstrap> boot_;
  std::unique_ptr<nicfw::engine> nic_;
  iso::options options_;
  // What every node must agree on from the start (topology, memory layout settings); it
  // goes into every barrier's digest.
  std::uint64_t agreement_ = 0;
  // A rendezvous that ran out of time, which this node arrived at.
  struct unfinished_rendezvous {
    std::uint64_t ticket;
    std::uint64_t digest;
    std::string call;
  };
  std::optional<unfinished_rendezvous> unfinished_rendezvous_;
  bool in_rendezvous_ = false;  // a fiber of this node holds the collective_turn
  runtime::event_loop loop_;
  runtime::fiber_scheduler fibers_;
  // Units of the loop, in the order it ends a round: plain messages first, so that records
  // they hold move out before the SMM runs pulses.
  runtime::plain_messages plain_;
  runtime::shared_memory_manager smm_;
  runtime::fetch_add_client counters_;
  runtime::remote_store_client store_;
  runtime::fork_service forks_;
  // Every node's counter area in its window (runtime/counters/counter_area.hpp), by node
  // id; empty where this process does not map that node's window.
  std::vector<std::span<std::atomic<std::uint64_t>>> counter_areas_;
  bool same_host_counters_ = true;
  std::vector<node_id> counter_holders_;                  // by counter index
  nicfw::multicast_service* multicast_ = nullptr;         // owned by the NIC
  nicfw::remote_store_service* store_service_ = nullptr;  // owned by the NIC
  std::unique_ptr<runtime::sequencer_groups> sequenced_;
  std::unique_ptr<runtime::isotach_groups> isotach_ordered_;
  std::uint32_t groups_ = 0;
  message pop_inbox();
  // Moves a message's bytes out of the NIC's queue into a copy, releasing its record.
  void copy_out(message::holder& h);
  void move_out_of_place();
  void copy_inbox_out_of_place();

  node_link* link_ = nullptr;
  std::uint64_t isochrons_ = 0;
  const runtime::fiber_record* isochron_owner_ = nullptr;  // see open_isochron()
  std::deque<std::unique_ptr<message::holder>> inbox_;     // delivered, not yet received
  std::vector<message::holder*> in_place_;  // received messages still in the NIC's queue
  // Last: the table is a unit of loop_ and uses sequenced_.
  std::shared_ptr<object_link> objects_link_;
  std::unique_ptr<runtime::object_table> objects_;
};

// Throws iso::error carrying `status` (which must not be OK).
[[noreturn]] void throw_status(const absl::Status& status);
inline void throw_if_error(const absl::Status& status) {
  if (!status.ok()) throw_status(status);
}
// The value, or iso::error carrying the status.
template <typename T>
T value_or_throw(absl::StatusOr<T> result) {
  if (!result.ok()) throw_status(result.status());
  return *std::move(result);
}

}  // namespace iso::detail
