// The public API of shared objects (include/iso/object.hpp): building a type, the
// collective creation, and calls, over the node's object table.
#include "iso/object.hpp"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "iso/isochron.hpp"
#include "runtime/node_state.hpp"
#include "runtime/objects/object_link.hpp"
#include "runtime/objects/object_table.hpp"
#include "runtime/objects/type_name.hpp"
#include "runtime/progress/event_loop.hpp"

namespace iso {
namespace detail {

void throw_argument_size(std::size_t got, std::size_t want) {
  throw error(error_code::invalid_argument,
              absl::StrFormat("%u bytes where %u were expected", got, want));
}

void throw_element_size(const std::string& operation, std::size_t got, std::size_t fixed,
                        std::size_t element) {
  throw error(error_code::invalid_argument,
              absl::StrFormat("%s takes %u bytes of fixed-size arguments and then whole "
                              "elements of %u bytes, not %u bytes",
                              operation, fixed, element, got));
}

void throw_elements_shape(const std::string& operation, const std::optional<elements_header>& got,
                          std::size_t fixed, std::size_t element) {
  const std::string given =
      got ? absl::StrFormat("the call gave %u bytes of them and elements of %u bytes",
                            got->fixed_bytes, got->element_bytes)
          : std::string("the call gave no run of elements");
  throw error(error_code::invalid_argument,
              absl::StrFormat("%s takes %u bytes of fixed-size arguments and then elements of "
                              "%u bytes, but %s (pass arguments of the operation's own types)",
                              operation, fixed, element, given));
}

runtime::object_table& node_state::objects() {
  if (!objects_) {
    objects_ = std::make_unique<runtime::object_table>(
        loop_,
        runtime::make_object_order(options_.object_order, *sequenced_, *isotach_ordered_,
                                   next_group_id(), count()),
        id(), count(), runtime::plain_messages::max_message_size(*nic_));
    objects_->set_call_timeout(absl::FromChrono(options().object_call_timeout));
    objects_link_ = std::make_shared<object_link>(object_link{.owner = this});
  }
  return *objects_;
}

node_state* node_of(const object& o) { return o.link_ ? o.link_->owner : nullptr; }

absl::Status node_state::settle_dropped_objects(bool leaving) {
  if (!objects_) return absl::OkStatus();
  if (leaving) return objects_->settle_dropped();
  // A dispatch through the isotach order is an isochron of its own, and one may run a
  // read's body: a later poll outside any isochron, guard or body sends it.
  if (smm_.in_isochron() || isochron_owner_ != nullptr || loop_.progress_forbidden()) {
    return absl::OkStatus();
  }
  absl::Status sent = objects_->dispatch_ready_dropped();
  // The dropped call is off the queue: failing the node says so, where a status returned
  // to an unrelated poll or ready() could be dropped and the write lost without a word.
  if (!sent.ok()) fail(sent);
  return sent;
}

namespace {

// The node behind a handle, or failed_precondition once it has ended.
node_state& state_of(const std::shared_ptr<object_link>& link, object_id id, const char* what) {
  if (!link || link->owner == nullptr) {
    throw_status(absl::FailedPreconditionError(absl::StrFormat(
        "%s on object %u: its node has ended (the job is over); objects live as long as "
        "their node",
        what, id)));
  }
  return *link->owner;
}

}  // namespace

inspection::inspection(const object& o, const std::type_info& state_type) {
  node_state& state = state_of(o.link_, o.id_, "inspect()");
  runtime::object_table& table = state.objects();
  // Inside another inspection the outer one has checked the node; waiting is refused there.
  if (!table.inspecting()) throw_if_error(state.usable_outside_isochron("object::inspect"));
  state_ = value_or_throw(table.begin_inspection(o.id_, state_type));
  node_ = &state;
}

inspection::~inspection() {
  if (node_ != nullptr) node_->objects().end_inspection();
}

}  // namespace detail

object_type::object_type(std::string name, state_functions state)
    : impl_(std::make_shared<impl>(
          impl{.name = std::move(name), .state = std::move(state), .ops = {}})) {
  if (!impl_->state.create || !impl_->state.destroy || !impl_->state.clone) {
    throw error(
        error_code::invalid_argument,
        absl::StrFormat("object type %s: create, destroy and clone are required", impl_->name));
  }
}

object_type& object_type::add(operation op) {
  auto refuse = [&](const std::string& why) {
    throw error(
        error_code::invalid_argument,
        absl::StrFormat("object type %s, operation %u (%s): %s", impl_->name, op.id, op.name, why));
  };
  if (op.name.empty()) refuse("an operation needs a name");
  if (op.id < impl_->ops.size() && !impl_->ops[op.id].name.empty()) {
    refuse(absl::StrFormat("id %u is already operation %s", op.id, impl_->ops[op.id].name));
  }
  // Ids index a table: keep them small, as generated code numbers them.
  constexpr operation_id kMaxId = 4096;
  if (op.id >= kMaxId) refuse(absl::StrFormat("ids must be below %u", kMaxId));
  if (op.kind != operation_kind::read && op.kind != operation_kind::write) {
    refuse(absl::StrFormat("kind %u is neither read nor write", static_cast<unsigned>(op.kind)));
  }
  if (!op.unmarshal) refuse("no unmarshal");
  if (op.alternatives.empty()) refuse("no alternative");
  for (const alternative& alt : op.alternatives) {
    if (!alt.body) refuse("an alternative without a body");
  }
  if (op.id >= impl_->ops.size()) impl_->ops.resize(op.id + 1);
  impl_->ops[op.id] = std::move(op);
  return *this;
}

const operation* object_type::find(operation_id id) const {
  if (id < impl_->ops.size() && !impl_->ops[id].name.empty()) return &impl_->ops[id];
  return nullptr;
}

object::object(node& n, const object_type& type, const object_options& opts) {
  detail::node_state& state = detail::node_state::of(n);
  const auto turn = detail::value_or_throw(state.begin_collective("object creation"));
  runtime::object_table& table = state.objects();
  id_ = detail::value_or_throw(table.create(type.shared(), opts));
  link_ = state.objects_link();
  // The objects order is in the digest: name it, so that nodes that disagree on it see why.
  detail::throw_if_error(state.rendezvous(
      turn, table.creation_digest(id_),
      absl::StrFormat("object creation (objects order %s)", runtime::order_name(table.order()))));
}

object object::create(node& n, const object_type& type, const object_options& opts) {
  detail::node_state& state = detail::node_state::of(n);
  detail::throw_if_error(state.usable_outside_isochron("object::create"));
  const object_id id = detail::value_or_throw(state.objects().create_ordered(type.shared(), opts));
  return {state.objects_link(), id};
}

object object::attach(node& n, object_id id) {
  detail::node_state& state = detail::node_state::of(n);
  detail::throw_if_error(state.usable_outside_isochron("object::attach"));
  detail::throw_if_error(
      state.objects().attach(id, absl::FromChrono(state.options().barrier_timeout)));
  return {state.objects_link(), id};
}

void register_object_type(node& n, const object_type& type) {
  detail::node_state& state = detail::node_state::of(n);
  const auto turn = detail::value_or_throw(state.begin_collective("register_object_type"));
  const std::uint64_t digest = detail::value_or_throw(state.objects().register_type(type.shared()));
  detail::throw_if_error(state.rendezvous(turn, digest, "register_object_type"));
}

const std::string& object::type_name() const {
  detail::node_state& state = detail::state_of(link_, id_, "type_name()");
  // The table keeps the type, so the name lives as long as the node.
  return *detail::value_or_throw(state.objects().type_name(id_));
}

object_placement object::placement() const {
  detail::node_state& state = detail::state_of(link_, id_, "placement()");
  return detail::value_or_throw(state.objects().placement_of(id_));
}

std::vector<std::byte> object::invoke(operation_id op, std::span<const std::byte> args) {
  detail::node_state& state = detail::state_of(link_, id_, "invoke()");
  detail::throw_if_error(state.usable_outside_isochron("object call"));
  return detail::value_or_throw(state.objects().invoke(id_, op, args, false));
}

object_call object::start(operation_id op, std::span<const std::byte> args) {
  detail::node_state& state = detail::state_of(link_, id_, "start()");
  detail::throw_if_error(state.usable_outside_isochron("object call"));
  return {link_, id_, detail::value_or_throw(state.objects().start(id_, op, args, false))};
}

object_call object::start(isochron& in, operation_id op, std::span<const std::byte> args) {
  detail::node_state& state = detail::state_of(link_, id_, "start(isochron&)");
  detail::throw_if_error(state.health());
  absl::Status problem;
  if (&detail::node_state::of(in.node_) != &state) {
    problem = absl::FailedPreconditionError(absl::StrFormat(
        "the isochron is node %u's, and the object handle node %u's", in.node_.id(), state.id()));
  } else if (!in.open_) {
    problem = absl::FailedPreconditionError("the isochron is already issued");
  }
  const std::uint64_t call =
      detail::value_or_throw(state.objects().start_in_isochron(id_, op, args, problem));
  object_call c{link_, id_, call};
  c.in_isochron_ = true;
  return c;
}

object_call object::start_read(operation_id op, std::span<const std::byte> args) {
  detail::node_state& state = detail::state_of(link_, id_, "start_read()");
  detail::throw_if_error(state.usable_outside_isochron("object call"));
  return {link_, id_, detail::value_or_throw(state.objects().start(id_, op, args, true))};
}

object_call::object_call(object_call&& other) noexcept
    : link_(std::move(other.link_)),
      id_(other.id_),
      call_(std::exchange(other.call_, 0)),
      in_isochron_(other.in_isochron_) {}

object_call& object_call::operator=(object_call&& other) noexcept {
  if (this != &other) {
    drop();
    link_ = std::move(other.link_);
    id_ = other.id_;
    call_ = std::exchange(other.call_, 0);
    in_isochron_ = other.in_isochron_;
  }
  return *this;
}

object_call::~object_call() { drop(); }

void object_call::drop() noexcept {
  // After the node ended there is nothing left to drop.
  if (call_ != 0 && link_ && link_->owner != nullptr) link_->owner->objects().abandon(call_);
  call_ = 0;
}

bool object_call::ready() {
  if (call_ == 0) {
    detail::throw_status(absl::FailedPreconditionError(
        absl::StrFormat("ready() on object %u: the handle holds no call", id_)));
  }
  detail::node_state& state = detail::state_of(link_, id_, "ready()");
  absl::StatusOr<bool> done = state.objects().poll(call_);
  // As node::poll(): dropped calls this round told to go out again go out now. A failure
  // here fails the node (settle_dropped_objects), and get() then throws it.
  if (done.ok() && !state.settle_dropped_objects(/*leaving=*/false).ok()) return true;
  return !done.ok() || *done;
}

std::vector<std::byte> object_call::get() {
  if (call_ == 0) {
    detail::throw_status(absl::FailedPreconditionError(absl::StrFormat(
        "get() on object %u: the handle holds no call (get() takes a result once)", id_)));
  }
  detail::node_state& state = detail::state_of(link_, id_, "get()");
  // Its isochron may be the one still open here: waiting would never end.
  // Refused before the handle gives up its call, which then stays to be taken later (the
  // first check includes the second).
  if (in_isochron_) {
    detail::throw_if_error(
        state.usable_outside_isochron("get() of an object call that joined an isochron"));
  } else {
    detail::throw_if_error(state.objects().refuse_inside_inspection("get() of an object call"));
  }
  const std::uint64_t call = std::exchange(call_, 0);
  return detail::value_or_throw(state.objects().finish(call));
}

std::vector<std::byte> object::invoke_read(operation_id op, std::span<const std::byte> args) {
  detail::node_state& state = detail::state_of(link_, id_, "invoke_read()");
  detail::throw_if_error(state.usable_outside_isochron("object call"));
  return detail::value_or_throw(state.objects().invoke(id_, op, args, true));
}

void object::migrate(node_id to) {
  detail::node_state& state = detail::state_of(link_, id_, "migrate()");
  detail::throw_if_error(state.usable_outside_isochron("object::migrate"));
  detail::throw_if_error(state.objects().migrate(id_, to));
}

std::vector<std::byte> object::state_bytes() const {
  detail::node_state& state = detail::state_of(link_, id_, "state_bytes()");
  return detail::value_or_throw(state.objects().state_bytes(id_));
}

std::uint64_t object::writes_applied() const {
  detail::node_state& state = detail::state_of(link_, id_, "writes_applied()");
  return detail::value_or_throw(state.objects().writes_applied(id_));
}

std::size_t object::waiting_calls() const {
  detail::node_state& state = detail::state_of(link_, id_, "waiting_calls()");
  return detail::value_or_throw(state.objects().waiting_calls(id_));
}

object_placement object::current_placement() const {
  detail::node_state& state = detail::state_of(link_, id_, "current_placement()");
  return detail::value_or_throw(state.objects().current_placement_of(id_));
}

node_id object::owner() const {
  detail::node_state& state = detail::state_of(link_, id_, "owner()");
  return detail::value_or_throw(state.objects().owner_of(id_));
}

std::vector<resumed_call> object::resume_log() const {
  detail::node_state& state = detail::state_of(link_, id_, "resume_log()");
  return detail::value_or_throw(state.objects().resume_log(id_));
}

namespace {

// "(unsigned long, std::span<int const>)" for detail::parameter_list<unsigned long,
// std::span<int const, 18446744073709551615ul>>: a typed call's parameters as a reader
// would write them.
std::string parameter_names(const std::type_info& list) {
  std::string names = runtime::readable_type_name(list);
  const std::size_t open = names.find('<');
  const std::size_t close = names.rfind('>');
  names = open == std::string::npos || close == std::string::npos || close < open
              ? std::string()
              : names.substr(open + 1, close - open - 1);
  absl::StrReplaceAll({{", 18446744073709551615ul>", ">"}}, &names);
  if (!names.empty() && names.back() == ' ') names.pop_back();
  return absl::StrCat("(", names, ")");
}

}  // namespace

void object::check_parameters(operation_id op, const std::type_info& caller) const {
  // A handle whose node has ended, an unknown object or operation: the call's to report,
  // as for untyped calls.
  if (!link_ || link_->owner == nullptr) return;
  detail::node_state& state = *link_->owner;
  const absl::StatusOr<const operation*> found = state.objects().operation_of(id_, op);
  if (!found.ok() || (*found)->parameters == nullptr || *(*found)->parameters == caller) return;
  const absl::StatusOr<const std::string*> type = state.objects().type_name(id_);
  throw error(error_code::invalid_argument,
              absl::StrFormat("object %u (%s), operation %u (%s) takes %s; the call passes %s "
                              "(pass values of the operation's own types, e.g. "
                              "std::uint64_t{k} rather than a literal int)",
                              id_, type.ok() ? **type : std::string("?"), op, (*found)->name,
                              parameter_names(*(*found)->parameters), parameter_names(caller)));
}

void object::wrong_result_size(operation_id op, std::size_t got, std::size_t want) const {
  throw error(error_code::invalid_argument,
              absl::StrFormat("object %u, operation %u: a result of %u bytes where the caller "
                              "expects %u",
                              id_, op, got, want));
}

void object::wrong_result_shape(operation_id op, std::size_t got_element,
                                std::size_t element) const {
  throw error(error_code::invalid_argument,
              got_element == 0
                  ? absl::StrFormat("object %u, operation %u: the result is not a run of "
                                    "elements, where the caller expects elements of %u bytes",
                                    id_, op, element)
                  : absl::StrFormat("object %u, operation %u: the result is a run of %u-byte "
                                    "elements, where the caller expects elements of %u bytes",
                                    id_, op, got_element, element));
}

void object::wrong_result_elements(operation_id op, std::size_t got, std::size_t element) const {
  throw error(error_code::invalid_argument,
              absl::StrFormat("object %u, operation %u: a result of %u bytes is not a whole "
                              "number of the caller's %u-byte elements",
                              id_, op, got, element));
}

}  // namespace iso
