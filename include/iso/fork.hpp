// Fork, as Orca had it: start a procedure as a new process (a fiber, iso/fiber.hpp) on any
// node of the job, with arguments passed by value.
//
//   iso::run(argc, argv, [](iso::node& node) {
//     // Every node registers the same procedures, before any fork can reach it.
//     iso::register_procedure<std::int64_t>(node, "worker", [&](iso::node& n, std::int64_t k) {
//       ...;                                        // runs as a fiber of node n
//     });
//     iso::run_main_on_first(node, [&] {            // main on node 0, the others serve
//       std::vector<iso::forked> workers;
//       for (iso::node_id to = 0; to < node.count(); ++to) {
//         workers.push_back(iso::fork(node, to, "worker", iso::pack(std::int64_t{7})));
//       }
//       for (iso::forked& w : workers) w.join();     // until each has returned
//     });
//   });
//
// Procedures are registered by name on every node (SPMD registration), either taking the
// arguments as bytes, or typed: a list of trivially copyable types, packed by iso::pack()
// on the forking side and checked on the target (their number of bytes, and that the
// forking side packed the same types; the check compares the types' names as the compiler
// spells them, so both sides must be the same program). Results come back through shared
// variables or messages, as in Orca through shared objects: join() returns once the process
// has returned and every isochron it issued has executed on every node (its node makes a
// node::quiet() for it), so the forker, and any node it then tells, sees its writes.
//
// fork() returns once the target has accepted the fork and started the process (it runs
// there as a fiber named "fork '<name>' from node <n>", the next time a fiber of the
// target waits or yields). It waits for that answer at most options::barrier_timeout.
// Forks reach a node only while it makes progress: while one of its fibers waits (a body
// waiting in a barrier, in run_main_on_first, anywhere) or polls.
//
// Starting a job Orca-style: every node calls run_main_on_first() with the same main after
// registering its procedures; node 0 runs main, the other nodes serve forks until main has
// returned on node 0 and every process forked to them has ended. SPMD iso::run (every node
// runs the body) is unchanged, and forks work there too: a body that returns waits (at most
// options::barrier_timeout) for the processes forked to its node to end, and for those it
// forked and did not join; one of those that threw then fails the node, with its message.
//
// Shared objects, as Orca's fork(node, procedure, arguments, shared objects) had them: a
// procedure registered to take objects (an object_procedure, or the typed form below) is
// given handles to the objects its fork names, and uses them as its forker does:
//
//   iso::register_procedure<std::int64_t>(node, "add",
//       [](iso::node& n, std::span<const iso::object> objects, std::int64_t by) {
//         objects[0].call<std::int64_t>(kInc, by);   // the forker's counter
//       });
//   iso::fork(node, to, "add", {counter}, iso::pack(std::int64_t{1})).join();
//
// Objects are passed by reference, never copied: the target attaches each (object::attach)
// before it accepts the fork, and the object's placement decides what the target holds (a
// replica that it reads locally, or calls to the single copy wherever it is; an automatic
// object counts the target's calls like any other node's). The objects come in the order
// the fork lists them. The forker hands objects of its own node (made there by the
// collective constructor or object::create, or attached there); an object made by
// object::create elsewhere whose creation the target has not applied yet is waited for
// there, at most options::barrier_timeout.
//
// Errors (iso::error), all before the process runs: a target outside the job and a name
// that is empty or above 1 KiB (invalid_argument); arguments above max_fork_arguments()
// (out_of_range); a procedure not registered on the target (not_found), arguments of the
// wrong size or types for a typed procedure (invalid_argument), a target that stopped
// serving (failed_precondition, after run_main_on_first ended there), each naming the
// procedure and the target node; no answer in time (deadline_exceeded, naming the target).
// With objects, before anything is sent: a handle of another node, or one whose node has
// ended (failed_precondition, naming the object); more objects than fit beside the
// arguments in one message (out_of_range). On the target: objects handed to a procedure
// that takes none (invalid_argument), an object the target cannot attach (invalid_argument
// for one that does not exist there, deadline_exceeded for a creation not applied there in
// time), each naming the procedure, the object and the target node.
// A process that throws: its target goes on, and join() throws an iso::error with the
// exception's message (its code, for an iso::error), naming the procedure and the node.
// register_procedure: an empty or over-long name (invalid_argument), a name registered
// already on this node (already_exists).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "iso/node.hpp"
#include "iso/object.hpp"

namespace iso {

// A procedure that takes its arguments as bytes.
using procedure = std::function<void(node& n, std::span<const std::byte> arguments)>;
// One that takes shared objects too: handles on its node, in the order the fork lists them.
using object_procedure = std::function<void(node& n, std::span<const object> objects,
                                            std::span<const std::byte> arguments)>;

// Arguments packed for a typed procedure: their bytes and a digest of their types.
struct packed_arguments {
  std::vector<std::byte> bytes;
  std::uint64_t types = 0;  // 0: untyped bytes
};

namespace detail {

// A digest of the types' names (FNV-1a), the same in every process of one program.
template <typename... Args>
std::uint64_t type_digest() {
  std::uint64_t h = 14695981039346656037ULL;
  auto add = [&h](const char* name) {
    for (const char* c = name; *c != '\0'; ++c) {
      h = (h ^ static_cast<unsigned char>(*c)) * 1099511628211ULL;
    }
    h = (h ^ static_cast<unsigned char>(',')) * 1099511628211ULL;
  };
  (add(typeid(Args).name()), ...);
  (void)add;  // no types: the digest of an empty list
  return h == 0 ? 1 : h;
}

template <typename T>
T unpack_one(std::span<const std::byte> bytes, std::size_t& at) {
  T value;
  std::memcpy(&value, bytes.data() + at, sizeof(T));
  at += sizeof(T);
  return value;
}

void register_procedure(node& n, const std::string& name, procedure fn, std::uint64_t types,
                        std::size_t typed_bytes);
void register_procedure(node& n, const std::string& name, object_procedure fn, std::uint64_t types,
                        std::size_t typed_bytes);

// Unpacks typed arguments (checked by the target before the procedure runs) and calls `fn`
// with `leading` before them.
template <typename... Args, typename Fn, typename... Leading>
void call_unpacked(const Fn& fn, std::span<const std::byte> bytes, Leading&&... leading) {
  [[maybe_unused]] std::size_t at = 0;
  (void)bytes;  // no arguments: nothing to unpack
  // Braced: the arguments are unpacked left to right.
  std::tuple<Args...> values{detail::unpack_one<Args>(bytes, at)...};
  std::apply([&](const Args&... a) { fn(std::forward<Leading>(leading)..., a...); }, values);
}

}  // namespace detail

// Packs trivially copyable arguments for a typed procedure (register_procedure<Args...>).
template <typename... Args>
requires(std::is_trivially_copyable_v<Args>&&...) packed_arguments pack(const Args&... args) {
  packed_arguments out;
  out.types = detail::type_digest<Args...>();
  out.bytes.resize((sizeof(Args) + ... + 0));
  std::size_t at = 0;
  ((std::memcpy(out.bytes.data() + at, &args, sizeof(Args)), at += sizeof(Args)), ...);
  return out;
}

// Registers `fn` as `name` on `n`; every node registers the same procedures before the
// first fork (before the first barrier after start, or before run_main_on_first).
inline void register_procedure(node& n, const std::string& name, procedure fn) {
  detail::register_procedure(n, name, std::move(fn), 0, 0);
}

// The same, typed: fork with iso::pack(args...) of exactly these types.
template <typename... Args>
requires(std::is_trivially_copyable_v<Args>&&...) void register_procedure(
    node& n, const std::string& name,
    std::type_identity_t<std::function<void(node&, Args...)>> fn) {
  procedure raw = [fn = std::move(fn)](node& self, std::span<const std::byte> bytes) {
    detail::call_unpacked<Args...>(fn, bytes, self);
  };
  detail::register_procedure(n, name, std::move(raw), detail::type_digest<Args...>(),
                             (sizeof(Args) + ... + 0));
}

// Registers `fn`, which takes shared objects (see Shared objects above), as `name`.
inline void register_procedure(node& n, const std::string& name, object_procedure fn) {
  detail::register_procedure(n, name, std::move(fn), 0, 0);
}

// The same, typed: fork with objects and iso::pack(args...) of exactly these types.
template <typename... Args>
requires(std::is_trivially_copyable_v<Args>&&...) void register_procedure(
    node& n, const std::string& name,
    std::type_identity_t<std::function<void(node&, std::span<const object>, Args...)>> fn) {
  object_procedure raw = [fn = std::move(fn)](node& self, std::span<const object> objects,
                                              std::span<const std::byte> bytes) {
    detail::call_unpacked<Args...>(fn, bytes, self, objects);
  };
  detail::register_procedure(n, name, std::move(raw), detail::type_digest<Args...>(),
                             (sizeof(Args) + ... + 0));
}

// A forked process, as seen by the node that forked it. Move-only; destroying it without
// join() lets the process run on unobserved (the forker's body, once it returns, waits
// for it, and reports its exception if it threw). Used only while its node exists, on the
// node's thread.
class forked {
 public:
  forked() = default;
  forked(forked&&) noexcept;
  forked& operator=(forked&&) noexcept;
  ~forked();

  [[nodiscard]] node_id target() const { return target_; }
  [[nodiscard]] bool joinable() const { return node_ != nullptr; }
  // Waits until the process has returned (running this node's other fibers meanwhile).
  // No time limit (a process may run long); a target node that fails fails the job, and
  // that ends the wait.
  // Throws iso::error: failed_precondition for a handle that names no process; the
  // process's exception (see Errors); the node's or the job's failure.
  void join();

 private:
  friend forked fork(node& n, node_id target, std::string_view name,
                     std::span<const std::byte> arguments, std::uint64_t types);
  friend forked fork(node& n, node_id target, std::string_view name,
                     const std::vector<object>& objects, std::span<const std::byte> arguments,
                     std::uint64_t types);
  node* node_ = nullptr;
  node_id target_ = 0;
  std::uint64_t id_ = 0;
};

// Starts `name` on node `target` with `arguments` (copied); returns once it started there.
// `types` is what iso::pack() computed (0: untyped bytes, accepted by any procedure whose
// size matches). See Errors above.
forked fork(node& n, node_id target, std::string_view name,
            std::span<const std::byte> arguments = {}, std::uint64_t types = 0);
inline forked fork(node& n, node_id target, std::string_view name, const packed_arguments& args) {
  return fork(n, target, name, args.bytes, args.types);
}

// The same, handing the process the shared objects `objects` (handles of this node; see
// Shared objects above): `name` must take objects.
forked fork(node& n, node_id target, std::string_view name, const std::vector<object>& objects,
            std::span<const std::byte> arguments = {}, std::uint64_t types = 0);
inline forked fork(node& n, node_id target, std::string_view name,
                   const std::vector<object>& objects, const packed_arguments& args) {
  return fork(n, target, name, objects, args.bytes, args.types);
}

// The largest argument list fork() sends.
[[nodiscard]] std::size_t max_fork_arguments(node& n);

// Orca-style start (see above): main runs on node 0 only, the other nodes serve forks.
// Collective: every node calls it. Throws what main throws (on node 0), or iso::error: the
// node's or the job's failure.
void run_main_on_first(node& n, const std::function<void()>& main);

}  // namespace iso
