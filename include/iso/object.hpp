// Orca-style shared objects: an object type is a state plus operations; every operation is
// atomic with respect to every other operation on the same object, and is either a read
// (leaves the state as it was) or a write. An operation may be guarded: it has
// alternatives `guard -> body`, and a caller whose every guard is false waits until one
// becomes true (guards are evaluated only when the operation starts or is retried after a
// write); there are no locks, no condition variables and no explicit signalling.
//
//   // The type, built once per process (usually by generated code, or by hand as here).
//   constexpr iso::operation_id kInc = 0, kAwait = 1;
//   using guard = bool (*)(const std::int64_t&, std::int64_t);
//   using body = std::int64_t (*)(const std::int64_t&, std::int64_t);
//   const iso::object_type int_type =
//       iso::typed_object<std::int64_t>("Int")
//           .write(kInc, "inc", [](std::int64_t& v, std::int64_t by) { return v += by; })
//           .read(kAwait, "await", std::vector<std::pair<guard, body>>{
//               {[](const std::int64_t& v, std::int64_t n) { return v >= n; },
//                [](const std::int64_t& v, std::int64_t) { return v; }}})
//           .type();
//   iso::object total(node, int_type, {.placement = iso::object_placement::replicated});
//   total.call<std::int64_t>(kInc, std::int64_t{1});                  // every node
//   if (node.id() == 0) total.read<std::int64_t>(kAwait, std::int64_t{node.count()});
//
// Two layers. The runtime level (object_type, operation, alternative) sees a state as an
// opaque pointer and arguments and results as bytes: generated proxies and skeletons target
// it (protoc-gen-iso makes, from a .proto service, a base class to fill in, a
// make_object_type() and a typed proxy; see compiler-support/README.md). The typed layer
// (typed_object<State>) builds such a type from C++ lambdas, with trivially copyable
// arguments and results copied as bytes (the last argument may be a std::span of them,
// and a result a std::vector of them: rows of a length known only at run time).
//
// Placement (object_options::placement):
//   replicated   every node keeps a replica. A read runs on the caller's replica. A write
//                goes through the job-wide total order (the objects order, below) to every
//                replica, which applies the writes in that order; the caller resumes, with
//                the result, once its own replica applied it.
//   single_copy  one node (object_options::owner) keeps the state; its operations run
//                there, as a local call on the owner and by a request and reply from others.
//                migrate() moves it, at a point of the job-wide order.
//   automatic    a single copy that starts on object_options::owner (the hint) and moves to
//                its heaviest user: the owner counts the calls it runs by calling node, and
//                after each 64 of them, when one node made more than twice as many as the
//                owner itself, the reply to that node's next call offers it the copy, and it
//                migrates the copy to itself before that call returns. It also switches
//                between a single copy and replicas by the mix of reads and writes: over a
//                window of 64 calls, a single copy whose reads are at least 4 times its
//                writes becomes replicated (every node gets a replica of the owner's state
//                at one point of the job-wide order; waiting calls keep their place), and a
//                replicated object whose writes are at least as many as its reads (every
//                replica counts the order's writes, and each node reports its reads through
//                the order every 16 of them) becomes a single copy on its heaviest writer,
//                at one point of the order. The band between the two thresholds keeps a
//                mix near one of them from switching back and forth. Calls in flight during
//                a switch are sent again where the object now is, and run once.
//                object_options::reads_per_write, the expected mix, picks where it
//                starts. current_placement() says where it is now. (Types without save and load
//                stay where they are.)
// Placement never changes results.
//
// The objects order (options::object_order, ISO_OBJECT_ORDER; the same on every node, or the
// first creation fails naming it) is one of the two orders of iso/ordered_group.hpp:
//   sequencer    (the default) a counter on node 0's NIC numbers the writes, NICs forward
//                them along trees; ordered among the objects only.
//   isotach      each write is an isochronous message to every node, applied at its
//                logical time: writes are ordered with every shared-variable operation
//                too, and a write may join an isochron (start(isochron&, ...)), which makes
//                atomic actions over several objects and shared variables possible.
// Under either order every replica applies one object's writes in one order, and results
// are the same.
//
// Guards and continuations. A call whose guards are all false leaves a continuation
// (object, operation, arguments, whom to resume) on the object's FIFO queue, on every
// replica for a write of a replicated object, on the caller's replica for a read. After
// every write the queue is walked in order, repeatedly, until no waiting call can run: a
// continuation whose guard is true runs then, and its caller resumes. Every replica sees
// the same writes and walks the same queue, so an ordered call resumes at the same point of
// the total order everywhere (resume_log() records it). No thread or stack is held per
// waiting call: the caller waits in the node's event loop, serving everything else.
//
// Creation, two ways. Collective (SPMD, the constructor): every node creates the job's
// objects in one order with the same type name and options; ids are assigned in that
// order, and the constructor returns once every node created it. By one node (create()):
// the creation is a message of the job-wide order, every node makes its replica (or notes
// the owner) when it applies it, and ids are assigned in the order (from a range of their
// own, so the two ways never collide); the creator may hand the id to any node, which
// attach()es to it (as Orca's fork passes objects). For that, every node registers the
// job's types first (register_object_type, collective). Handles are cheap to copy; all
// copies name the same object. Objects live until their node ends.
//
// Errors (iso::error), each naming the object (id and type name) and the operation:
//   invalid_argument     an operation id the type does not have; arguments the operation's
//                        unmarshal rejects (nothing is sent or applied); an owner that is
//                        not a node of the job; arguments larger than one message; a typed
//                        call whose result type has another size than the result.
//   failed_precondition  a write operation called through read(); an object whose node has
//                        ended (the job is over); a call inside an open isochron (except
//                        start(isochron&, ...), whose own rules are given there), inside
//                        an operation's guard or body (operations do not nest), or inside
//                        the function of inspect() (it reads the state in place).
//   aborted              a guard or body threw: its message is carried; the state is as it
//                        was before the call (on every replica), and the call is gone.
//   deadline_exceeded    a call to a single copy on another node whose owner gave no sign
//                        of life within options::object_call_timeout (see Waits); the
//                        message names the object, the operation and the owner. Also a
//                        call to an object made by create() whose owner had not applied
//                        the creation within that timeout of the call's arrival there (an
//                        id that no node creates, or a creation late in reaching it): the
//                        call did not run, and the message names the object's id and the
//                        owner.
//   resource_exhausted   such a call while its owner already keeps the most calls of this
//                        caller for objects whose creation it has not applied (1024): it
//                        did not run.
//   and the node's failure (a peer died) while a call waits.
// Waits (all in the node's event loop): a call waits for its result or its guard, and ends
// early only if the job fails (naming the failed node) or, for a call to a single copy on
// another node, if the owner neither answers nor says that it keeps the call within
// options::object_call_timeout (default 60 s): the owner serves requests whenever it waits
// or polls, and one that computes without calling into the runtime, or is stopped, ends
// the call with deadline_exceeded. The call may still run there later; its answer is then
// discarded. A call whose guards are all false is kept by the owner, which says so: it may
// wait for as long as the program takes to make its guard true (a guarded call on a
// replica waits on its own node). Thread safety: as its node, one thread at a time.
#pragma once

#include <any>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "iso/detail/typed_arguments.hpp"
#include "iso/error.hpp"
#include "iso/node.hpp"
#include "iso/operation_kind.hpp"

namespace iso {

// An operation's number within its type: small, chosen by the type's author (generated code
// numbers operations as the .proto file lists them).
using operation_id = std::uint32_t;
// An object's number within the job, assigned in creation order.
using object_id = std::uint64_t;

enum class object_placement : std::uint8_t { replicated, single_copy, automatic };

// How the runtime keeps one state type. A state is an opaque pointer it never looks into.
struct state_functions {
  // A new state from initial bytes (empty: the default state). Throws iso::error
  // (invalid_argument) for bytes it cannot take.
  std::function<void*(std::span<const std::byte> initial)> create;
  std::function<void(void*)> destroy;
  // A copy: taken before a write whose body may throw, put back if it does.
  std::function<void*(const void*)> clone;
  // The state as bytes (a digest of replicas; migration), and a new state from such bytes.
  // May be empty: an object whose type lacks either cannot migrate.
  std::function<std::vector<std::byte>(const void*)> save = {};
  std::function<void*(std::span<const std::byte> saved)> load = {};
  // The state's C++ type, where the code that built these functions knows it (typed_object
  // and generated types set it): object::inspect<State>() compares it with State. Null: the
  // state cannot be inspected.
  const std::type_info* type = nullptr;
};

// Decoded arguments of one call: whatever the operation's unmarshal made of the bytes.
using decoded_arguments = std::any;

// One `guard -> body` alternative of an operation.
struct alternative {
  // True when the body may run now. Empty: always true. Must not change anything.
  std::function<bool(const void* state, const decoded_arguments& args)> guard = {};
  // Runs the operation, appending its result's bytes to `result`. A read's body gets a state
  // it must leave as it was.
  std::function<void(void* state, const decoded_arguments& args, std::vector<std::byte>& result)>
      body = {};
};

struct operation {
  operation_id id = 0;
  std::string name = {};
  operation_kind kind = operation_kind::read;
  // Decodes the argument bytes; throws iso::error (invalid_argument) saying what was wrong.
  // Runs on the caller first (so that bad arguments go nowhere), then where the call runs.
  std::function<decoded_arguments(std::span<const std::byte>)> unmarshal = {};
  // Tried in order; the first whose guard is true runs. At least one.
  std::vector<alternative> alternatives = {};
  // False only for bodies that never throw: then no copy of the state is taken per write.
  bool body_may_throw = true;
  // The parameter types, where known (typed_object sets it): a typed call whose arguments'
  // types differ is refused on the caller. Null for operations built by hand.
  const std::type_info* parameters = nullptr;
};

// A type of shared object: a name (for messages and the creation check), its state, and
// its operations by id. Build it fully before the first object of the type is created;
// objects keep a reference to it (shared), so it may be a temporary.
class object_type {
 public:
  object_type(std::string name, state_functions state);

  // Adds `op`. Throws iso::error (invalid_argument): an id already used, no alternative,
  // an alternative without a body, or no unmarshal.
  object_type& add(operation op);

  [[nodiscard]] const std::string& name() const { return impl_->name; }
  [[nodiscard]] const state_functions& state() const { return impl_->state; }
  // The operation with `id`, or null.
  [[nodiscard]] const operation* find(operation_id id) const;
  [[nodiscard]] std::size_t operations() const { return impl_->ops.size(); }

  // What objects of the type share (the runtime keeps it alive while they exist).
  struct impl {
    std::string name;
    state_functions state;
    std::vector<operation> ops;  // by id; ids without an operation have an empty name
  };
  [[nodiscard]] std::shared_ptr<const impl> shared() const { return impl_; }

 private:
  std::shared_ptr<impl> impl_;
};

struct object_options {
  object_placement placement = object_placement::replicated;
  node_id owner = 0;  // single_copy, automatic: the node that keeps the state first
  std::vector<std::byte> initial = {};  // given to state_functions::create; empty: default
  // automatic: the expected reads per write (a generated type's descriptor gives it as
  // read_write_ratio). At or above the ratio at which a single copy becomes replicated (4),
  // the object starts replicated; below it, or 0 (unknown), as a single copy on `owner`.
  double reads_per_write = 0;
};

// One resumption of a waiting call, as a replica recorded it (resume_log()).
struct resumed_call {
  node_id caller = 0;
  std::uint64_t call = 0;  // the caller's number for the call
  operation_id op = 0;
  std::uint64_t after_write = 0;  // how many writes the replica had applied then
  bool operator==(const resumed_call&) const = default;
};

class isochron;

namespace detail {
class node_state;
struct object_link;
}  // namespace detail
class object;
namespace detail {
// The node a handle belongs to, or null once that node has ended (fork hands objects).
[[nodiscard]] node_state* node_of(const object& o);

// The time during which object::inspect's function runs: checks that the inspection may
// start and where the state is, then keeps the node from making progress until it ends.
class inspection {
 public:
  inspection(const object& o, const std::type_info& state_type);
  ~inspection();
  inspection(const inspection&) = delete;
  inspection& operator=(const inspection&) = delete;
  [[nodiscard]] const void* state() const { return state_; }

 private:
  node_state* node_ = nullptr;
  const void* state_ = nullptr;
};
}  // namespace detail

// A call started by object::start() and not yet finished: a move-only handle to its result.
//
//   iso::object_call c = counter.start(kInc, bytes);   // dispatched; does not wait for it
//   while (!c.ready()) do_other_work();                 // optional: never blocks
//   std::vector<std::byte> result = c.get();            // waits; the call's result
//
// get() waits in the node's event loop until the result is there, as invoke() does, and
// throws what invoke() would have thrown for the call (see the file comment); it may be
// called once (then the handle is empty). ready() makes progress once (it serves the
// node's traffic one round, never sleeps or waits) and says whether get() would return
// without waiting; it is also true once the job failed (get() then throws the failure).
// Inside an operation's guard or body it makes no progress. A handle destroyed, or assigned
// over, without get() drops its call: the call still runs (a write is applied everywhere),
// its result is discarded when it arrives, and nothing else changes (an offer of an
// automatic copy that came with it is taken by this node's next call on the object; a
// dropped call to a single copy that became replicated before it ran is dispatched again,
// through the order, by this node's next object call or poll (node::poll(), ready()), and
// at the latest before the node leaves the job: a node that never calls an object again
// still has its dropped write applied, once).
// Errors of get() and ready() on an empty handle, or after the node ended:
// failed_precondition. Thread safety: as its node.
class object_call {
 public:
  object_call() = default;
  object_call(const object_call&) = delete;
  object_call& operator=(const object_call&) = delete;
  object_call(object_call&& other) noexcept;
  object_call& operator=(object_call&& other) noexcept;
  ~object_call();

  // True while the handle holds a call that get() has not taken.
  [[nodiscard]] bool valid() const { return call_ != 0; }
  [[nodiscard]] bool ready();
  std::vector<std::byte> get();

 private:
  friend class object;
  object_call(std::shared_ptr<detail::object_link> link, object_id id, std::uint64_t call)
      : link_(std::move(link)), id_(id), call_(call) {}
  void drop() noexcept;

  std::shared_ptr<detail::object_link> link_;
  object_id id_ = 0;
  std::uint64_t call_ = 0;
  bool in_isochron_ = false;  // started by object::start(isochron&, ...)
};

// A started call whose result is decoded as R when taken: object::start<R>() (result bytes
// copied into a trivially copyable R, a std::vector of trivially copyable elements, or
// void) and generated proxies' OpAsync() (the result message unmarshaled) make them.
// ready() and dropping are as object_call's; get() returns the value and throws, besides
// what object_call::get() throws, invalid_argument for a result that does not decode as R.
template <typename R>
class pending {
 public:
  using decoder = std::function<R(const std::vector<std::byte>&)>;
  pending() = default;
  pending(object_call call, decoder decode) : call_(std::move(call)), decode_(std::move(decode)) {}

  [[nodiscard]] bool valid() const { return call_.valid(); }
  [[nodiscard]] bool ready() { return call_.ready(); }
  R get() { return decode_(call_.get()); }

 private:
  object_call call_;
  decoder decode_;
};

// A handle to a shared object. Copyable; every copy names the same object.
class object {
 public:
  // Collective: creates the job's next object of `type` (see the file comment).
  object(node& n, const object_type& type, const object_options& opts);

  // Not collective: creates an object of a registered type (register_object_type) through
  // the job-wide order and returns once this node has it. Errors: a type not registered
  // here, initial bytes the state rejects, an owner outside the job (invalid_argument).
  static object create(node& n, const object_type& type, const object_options& opts);
  // A handle to object `id` made anywhere in the job (its id was handed over in a message):
  // waits until this node has applied its creation, for at most options.barrier_timeout
  // (then deadline_exceeded). invalid_argument for an id no creation can give.
  static object attach(node& n, object_id id);

  [[nodiscard]] object_id id() const { return id_; }
  [[nodiscard]] const std::string& type_name() const;
  [[nodiscard]] object_placement placement() const;
  // Where the object is now, as this node has applied the job-wide order: replicated or
  // single_copy (an automatic object switches between them; see the file comment).
  [[nodiscard]] object_placement current_placement() const;

  // Runs operation `op` with argument bytes `args` (a read or a write, as the operation is
  // declared) and returns its result's bytes. Blocks until the result is there (a guard may
  // keep it waiting). Errors: see the file comment. The same as start(op, args).get().
  std::vector<std::byte> invoke(operation_id op, std::span<const std::byte> args);
  // As invoke(), for a read only: a write operation is failed_precondition.
  std::vector<std::byte> invoke_read(operation_id op, std::span<const std::byte> args);

  // Non-blocking forms: dispatch the call (as invoke() and invoke_read() do) and return
  // without waiting for its result, which the handle's get() returns (see object_call). A
  // replicated write is put into the job-wide order at once, so writes started one after
  // another from a node are applied in the order they were started, on every replica, and
  // any number may be outstanding; a read of a replica runs at once (or waits in the
  // object's queue for its guard); a call to a single copy elsewhere is sent to its owner.
  // start() waits only where a call cannot be dispatched without it: the single copy is on
  // its way to this node (it waits for the copy), or an offer of an automatic copy made to
  // this node is not yet taken (it moves the copy here first). Errors found before
  // dispatch (the file comment: invalid operation or arguments, a write through
  // start_read(), a call inside an isochron or an operation) are thrown by start(); errors
  // of the call itself by get().
  [[nodiscard]] object_call start(operation_id op, std::span<const std::byte> args);
  [[nodiscard]] object_call start_read(operation_id op, std::span<const std::byte> args);
  template <typename Result, typename... Args>
  [[nodiscard]] pending<Result> start(operation_id op, const Args&... args) {
    check_parameters<Args...>(op);
    return {start(op, std::span<const std::byte>(encode(args...))), typed_decoder<Result>(op)};
  }

  // A write inside an isochron: adds write operation `op` with argument bytes `args` to the
  // open isochron `in` of this node, so that it takes effect at the isochron's logical time,
  // atomically with every other operation in it (shared-variable operations, messages,
  // other objects' writes): no node observes the isochron in part, whether it reads the
  // variables (in isochrons) or the objects (read operations on its replica). Only
  //   - a replicated object (not single_copy or automatic),
  //   - under the isotach objects order (options::object_order, ISO_OBJECT_ORDER=isotach),
  //   - a write operation,
  //   - without guards: every replica would evaluate a guard at the isochron's logical
  //     time, and where it is false there the call would have to wait for a later write;
  //     but an isochron is atomic, taking effect whole at that one time, so a false guard
  //     can neither block it nor let it take effect without the write (call a guarded
  //     operation outside the isochron, where it waits for its guard as usual),
  //   - with this node's isochron, still open,
  // may join; anything else is refused with failed_precondition naming the object, the
  // operation and the rule it broke, and nothing is added. Arguments are decoded first
  // (invalid_argument as for start()); an isochron that would grow too large is
  // resource_exhausted (nothing added). Never blocks. Every replica applies the write in
  // the global order of isochrons, so writes of one object from many nodes, inside and
  // outside isochrons, are applied in one order everywhere. The handle resolves once the
  // isochron is issued and this node's replica applied the write, with the operation's
  // result; a body that throws fails that call everywhere (aborted) and leaves the object
  // as it was, while the isochron's other operations still take effect. get() of such a
  // call while this node has an isochron open is failed_precondition (end the isochron
  // first: the write cannot be applied before it is issued); ready() is false until then.
  //
  //   iso::pending<std::int64_t> taken, given;        // options.object_order = isotach
  //   {
  //     iso::isochron in(node);
  //     taken = from.start<std::int64_t>(in, kInc, std::int64_t{-1});
  //     given = to.start<std::int64_t>(in, kInc, std::int64_t{1});
  //     in.fetch_add(transfers, 1);                   // all three, or none, seen anywhere
  //   }
  //   taken.get();                                    // after the isochron's end
  [[nodiscard]] object_call start(isochron& in, operation_id op, std::span<const std::byte> args);
  template <typename Result, typename... Args>
  [[nodiscard]] pending<Result> start(isochron& in, operation_id op, const Args&... args) {
    check_parameters<Args...>(op);
    return {start(in, op, std::span<const std::byte>(encode(args...))), typed_decoder<Result>(op)};
  }

  // Typed calls (and start<Result>() above): the arguments are trivially copyable values,
  // copied as bytes in order; the last may instead be a run of trivially copyable elements
  // of a length known at run time, a std::span<const T> (or std::span<T>, or a
  // std::vector<T>, which binds to it), whose elements' bytes follow the others'. The
  // operation takes it as a std::span<const T> (see typed_object). Result is void, a
  // trivially copyable value, or a std::vector<T> of trivially copyable T (the result's
  // bytes as elements). Pass values of the operation's own types (std::uint64_t{k}, not a
  // literal int): for an operation of a typed_object, a call whose argument types differ
  // (a std::vector<T> or a std::span of T of any extent stands for std::span<const T>) is
  // refused on this node before anything is sent, even where the sizes agree (a signed
  // for an unsigned count, float for int32 elements), since its bytes would be read as
  // other values; integers of the same size and signedness count as one type (long long
  // for std::int64_t, std::size_t for std::uint64_t, unsigned char for std::byte). A call with
  // elements, and a result that is elements, also carry the sizes the sender used (8 bytes ahead of
  // them), so that a mismatch there is refused, not misread, for operations built by hand too.
  // Errors, besides those of invoke(): invalid_argument for argument types other than the
  // operation's (naming both lists), for a result of another size than Result's, for elements of
  // another size than the caller's, or for fixed-size arguments or elements of other sizes than the
  // operation's (naming the object, the operation and the sizes). A span or vector anywhere but
  // last, elements or values that are not trivially copyable, do not compile.
  //
  //   std::vector<std::int32_t> row = rows.read<std::vector<std::int32_t>>(kRow, k);
  //   rows.call<void>(kPut, k, std::span<const std::int32_t>(row));
  template <typename Result, typename... Args>
  Result call(operation_id op, const Args&... args) {
    check_parameters<Args...>(op);
    return decode<Result>(invoke(op, encode(args...)), op);
  }
  template <typename Result, typename... Args>
  Result read(operation_id op, const Args&... args) {
    check_parameters<Args...>(op);
    return decode<Result>(invoke_read(op, encode(args...)), op);
  }
  // As read<std::vector<T>>(op, args...), into the caller's `out`, whose size the result
  // must have exactly (else invalid_argument, and `out` is left as it was): for results
  // whose length the caller knows, without a vector per call.
  template <typename T, typename... Args>
  void read_into(operation_id op, std::span<T> out, const Args&... args) {
    static_assert(!std::is_const_v<T> && std::is_trivially_copyable_v<T>,
                  "read_into fills a std::span of writable, trivially copyable elements");
    check_parameters<Args...>(op);
    const std::vector<std::byte> result = invoke_read(op, encode(args...));
    const std::span<const std::byte> bytes = elements_of<T>(result, op);
    if (bytes.size() != out.size_bytes()) wrong_result_size(op, bytes.size(), out.size_bytes());
    if (!bytes.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  }

  // Runs `f(const State&)` on this node's copy of the object's state, in place (nothing is
  // copied or sent), and returns what f returns: for reading a large state where a read
  // operation would copy its result out.
  //
  //   std::uint64_t rows = table.inspect<rows_state>([](const rows_state& s) {
  //     return s.rows.size();
  //   });
  //
  // Where: a replicated object (this node's replica), or a single copy this node owns now.
  // A single copy elsewhere is failed_precondition naming the object and the node that
  // keeps it; inspect never asks another node (read it with an operation, or migrate it
  // here). A replica or a copy on its way to this node is waited for, as a call waits: for
  // up to options::object_call_timeout, then deadline_exceeded naming the node it was to
  // come from (refused inside another inspection's f, where no wait may run).
  // An automatic object is inspected where it is now; an inspection is no call, so it does
  // not count in its placement decisions (inspect objects placed replicated or single_copy).
  //
  // When: at this node's point of the job-wide order, as a read operation on the replica
  // would run: f sees every write whose call this node has returned from (a replicated
  // write returns once this node's replica applied it), and every write the order has
  // delivered here (under the isotach order, every write of a logical time this node has
  // passed). Other nodes may be ahead or behind. Under the isotach objects order a barrier
  // after everybody's writes makes every replica's state the same; under the sequencer
  // order it does not (writes are ordered among the objects only): wait for them with a
  // guarded read instead.
  //
  // While f runs the state does not change: the node makes no progress, so no write is
  // applied, no other fiber runs (fibers switch only where one waits) and no request is
  // served. So f must not wait or call into the runtime in a way that would: an object
  // call, the get() of one started earlier (its handle keeps the call), creation or
  // migration, a barrier or quiet() is failed_precondition naming the inspected object;
  // anything else that waits or polls (a value's get(), yield(), node::poll(), an
  // isochron, fork) is failed_precondition too, saying that the node may not wait there,
  // and a fork so refused is not sent. Plain messages, window puts and node::fetch_add are
  // not refused (they change no object state), but the value of a fetch_add cannot be
  // waited for inside f. Inspecting
  // another object inside f is allowed (at the same point of the order). f must not keep
  // a reference or pointer into the state once it returns: the next write may change or
  // free it; return values (a reference type does not compile).
  //
  // State must be the object's state type as its type was built (typed_object<State>, or a
  // generated type's state message); another type is invalid_argument naming both types
  // (the state is never read as another type), and a type whose state_functions give no
  // type (built by hand at the runtime level) is invalid_argument too.
  //
  // Other errors: an inspection inside an operation's guard or body or a message handler,
  // or inside an isochron this node has open (as calls are; see the file comment):
  // failed_precondition; the node's failure; after the node ended: failed_precondition.
  // An exception f throws goes to the caller as it was, and the node goes on as before.
  // Blocks only to wait for a replica or copy on its way here (see above). Thread safety:
  // as its node.
  template <typename State, typename F>
  std::invoke_result_t<F, const State&> inspect(F&& f) const {
    using result = std::invoke_result_t<F, const State&>;
    static_assert(!std::is_reference_v<result>,
                  "object::inspect returns a value: f must not hand out a reference into the "
                  "state");
    const detail::inspection in(*this, typeid(State));
    return std::invoke(std::forward<F>(f), *static_cast<const State*>(in.state()));
  }

  // Moves a single copy to node `to` at a point of the job-wide order (any node may ask;
  // placement never changes results): calls waiting in its queue move with it, and calls
  // on their way to the old owner follow it. Returns once this node has applied the move.
  // Errors: a replicated object or a type without save and load (failed_precondition), `to`
  // not a node of the job (invalid_argument). The copy travels as one packet: a state
  // larger than a message fails the node that ships it.
  void migrate(node_id to);

  // Test and debug hooks, on this node's replica (single copy: on the owner only, else
  // failed_precondition): the state's bytes (state_functions::save), the number of writes
  // applied, the calls waiting in the object's queue now, and the ordered calls resumed
  // from the queue in the order they resumed. They do not wait and make no progress.
  [[nodiscard]] std::vector<std::byte> state_bytes() const;
  [[nodiscard]] std::uint64_t writes_applied() const;
  [[nodiscard]] std::size_t waiting_calls() const;
  // The node that keeps a single copy, as this node knows it now (replicated: this node).
  [[nodiscard]] node_id owner() const;
  [[nodiscard]] std::vector<resumed_call> resume_log() const;

 private:
  template <typename... Args>
  [[nodiscard]] static std::vector<std::byte> encode(const Args&... args) {
    return detail::encode_arguments(args...);
  }
  template <typename... Args>
  void check_parameters(operation_id op) const {
    check_parameters(op, typeid(detail::parameters_of<Args...>));
  }
  // Throws invalid_argument where operation `op` of this object's type states parameter
  // types (typed_object) other than `caller`; anything else the call itself reports.
  void check_parameters(operation_id op, const std::type_info& caller) const;
  template <typename Result>
  [[nodiscard]] Result decode(const std::vector<std::byte>& bytes, operation_id op) const {
    if constexpr (std::is_void_v<Result>) {
      (void)bytes;
      (void)op;
    } else if constexpr (detail::is_vector_v<Result>) {
      using element = typename Result::value_type;
      static_assert(std::is_trivially_copyable_v<element>,
                    "a typed object call's std::vector result holds trivially copyable elements");
      const std::span<const std::byte> elements = elements_of<element>(bytes, op);
      if (elements.size() % sizeof(element) != 0) {
        wrong_result_elements(op, elements.size(), sizeof(element));
      }
      Result r(elements.size() / sizeof(element));
      if (!r.empty()) std::memcpy(r.data(), elements.data(), elements.size());
      return r;
    } else {
      static_assert(!detail::is_span_v<Result>,
                    "a typed object call returns a run of elements as a std::vector, not a "
                    "std::span (or reads it into one: read_into)");
      static_assert(std::is_trivially_copyable_v<Result>,
                    "typed object calls return trivially copyable results (or a std::vector "
                    "of them)");
      if (bytes.size() != sizeof(Result)) wrong_result_size(op, bytes.size(), sizeof(Result));
      Result r;
      std::memcpy(&r, bytes.data(), sizeof(Result));
      return r;
    }
  }
  // The elements' bytes of a result that is a run of Elements (after its header), or
  // invalid_argument naming what the result is instead.
  template <typename Element>
  [[nodiscard]] std::span<const std::byte> elements_of(std::span<const std::byte> result,
                                                       operation_id op) const {
    const std::optional<detail::elements_header> h = detail::read_elements_header(result);
    if (!h || h->fixed_bytes != 0 || h->element_bytes != sizeof(Element)) {
      wrong_result_shape(op, h ? h->element_bytes : 0, sizeof(Element));
    }
    return result.subspan(sizeof(detail::elements_header));
  }
  [[noreturn]] void wrong_result_shape(operation_id op, std::size_t got_element,
                                       std::size_t element) const;
  [[noreturn]] void wrong_result_size(operation_id op, std::size_t got, std::size_t want) const;
  [[noreturn]] void wrong_result_elements(operation_id op, std::size_t got,
                                          std::size_t element) const;
  template <typename Result>
  [[nodiscard]] typename pending<Result>::decoder typed_decoder(operation_id op) const {
    return [self = *this, op](const std::vector<std::byte>& bytes) {
      return self.decode<Result>(bytes, op);
    };
  }

  object(std::shared_ptr<detail::object_link> link, object_id id)
      : link_(std::move(link)), id_(id) {}
  friend detail::node_state* detail::node_of(const object& o);
  friend class detail::inspection;

  std::shared_ptr<detail::object_link> link_;
  object_id id_ = 0;
};

// Collective: makes `type` known on every node under its name, so that objects of it can be
// created by one node (object::create) and attached to anywhere. Every node registers the
// job's types in one order; a node that registers another fails the rendezvous. A second
// registration of the same type is a no-op; another type under a registered name is
// invalid_argument.
void register_object_type(node& n, const object_type& type);

namespace detail {

// What a lambda or function `(State, A...) -> R` takes (A..., decayed) and returns, and
// whether it is noexcept.
template <typename F>
struct callable_args;
template <typename R, typename S, typename... A>
struct callable_signature {
  using result = R;
  using args = operation_arguments<std::decay_t<A>...>;
  static constexpr bool nothrow = false;
};
template <typename R, typename C, typename S, typename... A>
struct callable_args<R (C::*)(S, A...) const> : callable_signature<R, S, A...> {};
template <typename R, typename C, typename S, typename... A>
struct callable_args<R (C::*)(S, A...) const noexcept> : callable_signature<R, S, A...> {
  static constexpr bool nothrow = true;
};
template <typename R, typename S, typename... A>
struct callable_args<R (*)(S, A...)> : callable_signature<R, S, A...> {};
template <typename R, typename S, typename... A>
struct callable_args<R (*)(S, A...) noexcept> : callable_signature<R, S, A...> {
  static constexpr bool nothrow = true;
};
template <typename F>
struct lambda_traits_of {
  using type = callable_args<decltype(&F::operator())>;
};
template <typename R, typename S, typename... A>
struct lambda_traits_of<R (*)(S, A...)> {
  using type = callable_args<R (*)(S, A...)>;
};
template <typename R, typename S, typename... A>
struct lambda_traits_of<R (*)(S, A...) noexcept> {
  using type = callable_args<R (*)(S, A...) noexcept>;
};
template <typename F>
using lambda_traits = typename lambda_traits_of<F>::type;

}  // namespace detail

// Builds an object_type whose state is a C++ value of type State (copyable; `save` copies
// its bytes when State is trivially copyable, else uses the given function). Operations are
// lambdas `(State&, Args...) -> Result` for writes and `(const State&, Args...) -> Result`
// for reads, guards `(const State&, Args...) -> bool`; Args and Result trivially copyable
// (Result may be void). The last of Args may be a std::span<const T> (T trivially
// copyable): it gets the elements that follow the other arguments' bytes, copied into
// storage aligned for T, and the same span is given to the guards and the body; argument
// bytes that leave a part of an element over, or that a caller made for other sizes of
// the fixed-size arguments or of T, are refused by the operation's unmarshal
// (invalid_argument naming the operation and the sizes), before anything is sent or
// applied. Result may be a std::vector<T> (T trivially copyable): its elements' bytes; or a
// std::span<const T> into the state, whose elements are copied into the result as the body
// returns (no vector made on the way); either way the caller takes a std::vector<T>.
// A body declared noexcept (all of an operation's bodies; their type is one) lets the
// runtime skip the copy of the state it takes before each write whose body may throw
// (operation::body_may_throw), which matters for a large state, except for a write that
// returns a run of elements (copying them may fail after the body ran); a noexcept body
// that throws ends the process.
//
//   struct rows { std::vector<std::vector<std::int32_t>> by_number; };
//   iso::typed_object<rows>("Rows")
//       .write(kPut, "put",
//              [](rows& s, std::uint64_t k, std::span<const std::int32_t> row) noexcept {
//                if (s.by_number.size() <= k) s.by_number.resize(k + 1);
//                s.by_number[k].assign(row.begin(), row.end());
//              })
//       .read(kRow, "row", [](const rows& s, std::uint64_t k) {
//         return std::span<const std::int32_t>(s.by_number.at(k));
//       });
template <typename State>
class typed_object {
 public:
  // `save` and `load` (inverses) are needed only when State is not trivially copyable, and
  // then only to compare replicas (save) or to migrate (both).
  explicit typed_object(std::string name,
                        std::function<std::vector<std::byte>(const State&)> save = {},
                        std::function<State(std::span<const std::byte>)> load = {})
      : type_(std::move(name), functions(std::move(save), std::move(load))) {}

  // An unguarded write or read.
  template <typename Body>
  typed_object& write(operation_id id, std::string name, Body body) {
    return add_guarded<std::nullptr_t, Body>(id, std::move(name), operation_kind::write,
                                             {{nullptr, std::move(body)}});
  }
  template <typename Body>
  typed_object& read(operation_id id, std::string name, Body body) {
    return add_guarded<std::nullptr_t, Body>(id, std::move(name), operation_kind::read,
                                             {{nullptr, std::move(body)}});
  }
  // Guarded: alternatives {guard, body}, tried in order.
  template <typename Guard, typename Body>
  typed_object& write(operation_id id, std::string name,
                      std::vector<std::pair<Guard, Body>> alternatives) {
    return add_guarded<Guard, Body>(id, std::move(name), operation_kind::write,
                                    std::move(alternatives));
  }
  template <typename Guard, typename Body>
  typed_object& read(operation_id id, std::string name,
                     std::vector<std::pair<Guard, Body>> alternatives) {
    return add_guarded<Guard, Body>(id, std::move(name), operation_kind::read,
                                    std::move(alternatives));
  }
  // Each of the above with `check`, a function of the operation's arguments alone
  // (`(Args...) -> void`, as the body takes them, without the state) that the operation's
  // unmarshal runs once it has decoded them: it throws iso::error (invalid_argument, saying
  // what is wrong) to refuse arguments, on the caller before anything is sent, so that
  // nothing is applied anywhere, and the body may rely on them (and be noexcept).
  //
  //   .write(kPut, "put", [](rows& s, std::uint64_t slot, std::span<const double> row)
  //          noexcept { ... },
  //          [](std::uint64_t slot, std::span<const double>) { if (slot >= kSlots) throw ...; })
  template <typename Body, typename Check>
  typed_object& write(operation_id id, std::string name, Body body, Check check) {
    return add_guarded<std::nullptr_t, Body>(id, std::move(name), operation_kind::write,
                                             {{nullptr, std::move(body)}}, std::move(check));
  }
  template <typename Body, typename Check>
  typed_object& read(operation_id id, std::string name, Body body, Check check) {
    return add_guarded<std::nullptr_t, Body>(id, std::move(name), operation_kind::read,
                                             {{nullptr, std::move(body)}}, std::move(check));
  }
  template <typename Guard, typename Body, typename Check>
  typed_object& write(operation_id id, std::string name,
                      std::vector<std::pair<Guard, Body>> alternatives, Check check) {
    return add_guarded<Guard, Body>(id, std::move(name), operation_kind::write,
                                    std::move(alternatives), std::move(check));
  }
  template <typename Guard, typename Body, typename Check>
  typed_object& read(operation_id id, std::string name,
                     std::vector<std::pair<Guard, Body>> alternatives, Check check) {
    return add_guarded<Guard, Body>(id, std::move(name), operation_kind::read,
                                    std::move(alternatives), std::move(check));
  }

  [[nodiscard]] const object_type& type() const { return type_; }

 private:
  static state_functions functions(std::function<std::vector<std::byte>(const State&)> save,
                                   std::function<State(std::span<const std::byte>)> load) {
    state_functions f;
    f.create = [](std::span<const std::byte> initial) -> void* {
      if (initial.empty()) return new State();
      if constexpr (std::is_trivially_copyable_v<State>) {
        if (initial.size() != sizeof(State)) {
          detail::throw_argument_size(initial.size(), sizeof(State));
        }
        auto* s = new State();
        std::memcpy(static_cast<void*>(s), initial.data(), sizeof(State));
        return s;
      } else {
        throw error(error_code::invalid_argument,
                    "this typed object takes no initial bytes (its state is not trivially "
                    "copyable)");
      }
    };
    f.destroy = [](void* s) { delete static_cast<State*>(s); };
    f.clone = [](const void* s) -> void* { return new State(*static_cast<const State*>(s)); };
    f.type = &typeid(State);
    if (load) {
      f.load = [load = std::move(load)](std::span<const std::byte> saved) -> void* {
        return new State(load(saved));
      };
    } else if constexpr (std::is_trivially_copyable_v<State>) {
      f.load = f.create;
    }
    f.save = [save = std::move(save)](const void* s) {
      const auto& state = *static_cast<const State*>(s);
      if (save) return save(state);
      std::vector<std::byte> bytes;
      if constexpr (std::is_trivially_copyable_v<State>) detail::append_result(bytes, state);
      return bytes;
    };
    return f;
  }

  template <typename Guard, typename Body, typename Check = std::nullptr_t>
  typed_object& add_guarded(operation_id id, std::string name, operation_kind kind,
                            std::vector<std::pair<Guard, Body>> alternatives,
                            Check check = nullptr) {
    using traits = detail::lambda_traits<Body>;
    using arguments = typename traits::args;
    using decoded = typename arguments::decoded;
    using result_type = typename traits::result;
    operation op;
    op.id = id;
    op.name = std::move(name);
    op.kind = kind;
    op.parameters = &typeid(typename arguments::parameters);
    op.unmarshal = [name = op.name, check = std::move(check)](
                       std::span<const std::byte> bytes) -> decoded_arguments {
      decoded args = arguments::unpack(bytes, name);
      if constexpr (!std::is_same_v<Check, std::nullptr_t>) arguments::apply(check, args);
      return decoded_arguments(std::move(args));
    };
    // Copying a run of elements into the result allocates after the body changed the state,
    // so a write returning one keeps the copy of the state that undoes a failure there.
    op.body_may_throw =
        !traits::nothrow || (kind == operation_kind::write && detail::is_elements_v<result_type>);
    for (auto& [guard, body] : alternatives) {
      alternative alt;
      if constexpr (!std::is_same_v<Guard, std::nullptr_t>) {
        alt.guard = [guard = std::move(guard)](const void* s, const decoded_arguments& a) {
          return arguments::apply(
              [&](const auto&... v) { return guard(*static_cast<const State*>(s), v...); },
              std::any_cast<const decoded&>(a));
        };
      }
      alt.body = [body = std::move(body)](void* s, const decoded_arguments& a,
                                          std::vector<std::byte>& out) {
        arguments::apply(
            [&](const auto&... v) {
              State& state = *static_cast<State*>(s);
              if constexpr (std::is_void_v<result_type>) {
                body(state, v...);
              } else {
                // Room for a value first: appending it then cannot fail after the body ran.
                if constexpr (!detail::is_elements_v<result_type>) {
                  out.reserve(out.size() + sizeof(result_type));
                }
                detail::append_result(out, body(state, v...));
              }
            },
            std::any_cast<const decoded&>(a));
      };
      op.alternatives.push_back(std::move(alt));
    }
    type_.add(std::move(op));
    return *this;
  }

  object_type type_;
};

}  // namespace iso
