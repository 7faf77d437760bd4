// Fork (iso/fork.hpp) between nodes: the procedures registered on this node, the forks it
// made and waits on, and the processes it serves for others, each as a fiber. Requests and
// answers are plain messages of their own direct tag (direct_tag::fork), so they never mix
// with the program's messages.
//
//   fork_service forks(loop, fibers, self, nodes, {.answer_timeout = absl::Seconds(60)});
//   forks.set_node(&node);                          // what procedures are given
//   ISO_RETURN_IF_ERROR(forks.add("worker", fn, 0, 0));
//   absl::StatusOr<std::uint64_t> id = forks.fork(2, "worker", args, 0);  // started there
//   ISO_RETURN_IF_ERROR(forks.join(*id));           // returned there
//
// Protocol: a request (id, name, argument types, shared objects' ids, arguments) spawns a
// fiber on the target; it attaches the objects there (as Orca's fork shares them: the
// object's placement decides whether the target gets a replica or calls the single copy),
// answers `accepted` and runs the procedure, then `ended` (or `failed` with the
// exception's message), or answers `refused` with the reason. `stop` (from node 0, after
// run_main_on_first's main) ends serving. One thread uses it (the node's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/node_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "iso/fork.hpp"
#include "runtime/fibers/fiber_scheduler.hpp"
#include "runtime/messages/plain_messages.hpp"
#include "runtime/progress/event_loop.hpp"

namespace iso::runtime {

class fork_service {
 public:
  struct options {
    // How long fork() waits for the target's answer, and a body's end for the processes
    // forked to its node.
    absl::Duration answer_timeout = absl::Seconds(60);
  };
  static constexpr std::size_t kMaxName = 1024;
  // What a registered procedure is given: the arguments, and the ids of the shared objects
  // the fork hands it, attached on this node before it runs.
  using body = std::function<void(iso::node& n, std::span<const std::byte> arguments,
                                  std::span<const std::uint64_t> objects)>;

  // Registers with `loop` (direct_tag::fork).
  fork_service(event_loop& loop, fiber_scheduler& fibers, comm::node_id self, std::uint32_t nodes,
               const options& opts);

  // The node procedures run on; set before any fork can arrive.
  void set_node(iso::node* n) { node_ = n; }
  // Runs on the target after a procedure returned, before `ended` is sent: what makes its
  // isochrons visible everywhere (node::quiet), so that whoever joins sees its writes.
  void set_settle(std::function<absl::Status()> settle) { settle_ = std::move(settle); }

  // Registers `fn` as `name`; `types` and `typed_bytes` describe a typed procedure (types 0:
  // it takes bytes); `takes_objects`: forks may hand it shared objects. InvalidArgument for
  // a bad name, AlreadyExists for a second `name`.
  [[nodiscard]] absl::Status add(const std::string& name, body fn, std::uint64_t types,
                                 std::size_t typed_bytes, bool takes_objects);
  // Forks `name` to `target` with the shared objects `objects` (ids of objects this node
  // has); returns the fork's id once the target started it.
  [[nodiscard]] absl::StatusOr<std::uint64_t> fork(comm::node_id target, std::string_view name,
                                                   std::span<const std::byte> arguments,
                                                   std::uint64_t types,
                                                   std::span<const std::uint64_t> objects = {});
  // Waits until fork `id` has returned; what its procedure threw, if it did.
  [[nodiscard]] absl::Status join(std::uint64_t id);
  // Nobody will join fork `id`: its answer is dropped when it comes.
  void detach(std::uint64_t id);
  [[nodiscard]] std::size_t max_arguments() const;

  // run_main_on_first: node 0 tells the others to stop serving once main has returned; a
  // serving node waits until told and until every process forked to it has returned.
  [[nodiscard]] absl::Status stop_serving_everywhere();
  [[nodiscard]] absl::Status serve_until_stopped();
  // At a body's end: waits (at most answer_timeout) for the processes forked here, and for
  // those this node forked elsewhere and did not join (once it has passed the job's end
  // barrier nothing could serve them, and no fork can come here any more). A process this
  // node forked that threw and was never joined is reported here.
  [[nodiscard]] absl::Status await_processes();

 private:
  enum class kind : std::uint8_t { request = 1, accepted, refused, ended, failed, stop };
  struct request {
    comm::node_id source = 0;
    std::uint64_t id = 0;
    std::uint64_t types = 0;
    std::string name;
    std::vector<std::uint64_t> objects;
    std::vector<std::byte> arguments;
  };
  struct registered {
    body fn;
    std::uint64_t types = 0;
    std::size_t typed_bytes = 0;
    bool takes_objects = false;
  };
  struct pending {
    comm::node_id target = 0;
    std::string name;
    kind answer = kind::request;  // request: no answer yet
    absl::Status outcome;         // refused or failed
    bool detached = false;
    // Its process has returned there (or threw): nothing more comes for it.
    [[nodiscard]] bool returned() const { return answer == kind::ended || answer == kind::failed; }
  };

  void on_message(comm::node_id source, std::span<const std::byte> bytes);
  // The fiber that serves `r`: checks it, answers, runs it.
  void serve(const request& r);
  [[nodiscard]] absl::Status check(const request& r) const;
  // Attaches the request's objects here (bounded by answer_timeout), naming the first that
  // cannot be.
  [[nodiscard]] absl::Status attach_objects(const request& r);
  [[nodiscard]] absl::Status send(comm::node_id to, kind k, std::uint64_t id,
                                  const absl::Status& outcome);

  event_loop& loop_;
  fiber_scheduler& fibers_;
  plain_messages plain_;
  comm::node_id self_;
  std::uint32_t nodes_;
  options options_;
  iso::node* node_ = nullptr;
  std::function<absl::Status()> settle_;
  // Node maps: a fork's entry is waited on while other fibers add theirs, and a procedure
  // runs while others may be registered.
  absl::node_hash_map<std::string, registered> procedures_;
  absl::node_hash_map<std::uint64_t, pending> pending_;
  std::uint64_t next_id_ = 1;
  std::size_t serving_ = 0;  // processes forked here that have not returned
  // What processes this node forked threw, where nobody joined them.
  std::vector<absl::Status> unjoined_failures_;
  bool stopped_ = false;  // node 0's main has returned (run_main_on_first)
  comm::node_id stopped_by_ = 0;
};

}  // namespace iso::runtime
