// Support for the object types protoc-gen-iso generates (compiler-support/README.md): the
// pieces every generated dispatch skeleton and proxy shares, so the generated code stays
// short. Users do not call these directly; they use the generated classes:
//
//   class Counter final : public demo::plain::CounterObjectBase {   // the user's part
//     demo::plain::Empty Add(demo::plain::Count& s, const demo::plain::Delta& d) override;
//     ...
//   };
//   iso::object obj(node, make_object_type(std::make_shared<Counter>()), {});
//   demo::plain::CounterObjectProxy counter(obj);
//   counter.Add({.by = 1});                                          // blocking call
//   iso::pending<demo::plain::Empty> added = counter.AddAsync({.by = 1});  // non-blocking
//   added.get();                                                     // waits for it
//
// Every function here turns a marshaling failure (absl::Status) into iso::error with the
// status's message: invalid_argument for bytes that do not unmarshal. Thread safety: as the
// object runtime (one thread per node); the functions themselves keep no state.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <typeinfo>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "iso/error.hpp"
#include "iso/isochron.hpp"
#include "iso/marshal.hpp"
#include "iso/object.hpp"

namespace iso::generated {

// Throws iso::error(invalid_argument) carrying `status`'s message, prefixed by `what`.
[[noreturn]] inline void throw_status(std::string_view what, const absl::Status& status) {
  throw error(error_code::invalid_argument,
              std::string(what) + ": " + std::string(status.message()));
}

// A generated value from all of `bytes`, or invalid_argument naming what was wrong.
template <class T>
[[nodiscard]] T decode(std::span<const std::byte> bytes, std::string_view what) {
  T value{};
  if (absl::Status s = unmarshal(bytes, value); !s.ok()) throw_status(what, s);
  return value;
}

// Appends the marshaling of `value` to `out` (the runtime keeps results as one buffer).
template <class T>
void append(const T& value, std::vector<std::byte>& out) {
  gather_list list;
  marshal(value, list);
  const std::size_t at = out.size();
  out.resize(at + list.bytes());
  list.copy_to(out.data() + at);
}

// State functions for a generated state message: the default value, or unmarshaled from
// initial or saved bytes; saved by marshaling, so that replicas compare and copies migrate.
template <class State>
[[nodiscard]] state_functions state_functions_of(std::string_view type_name) {
  const std::string what = std::string(type_name) + " state";
  state_functions f;
  f.create = [what](std::span<const std::byte> initial) -> void* {
    if (initial.empty()) return new State{};
    return new State(decode<State>(initial, what));
  };
  f.destroy = [](void* s) { delete static_cast<State*>(s); };
  f.clone = [](const void* s) -> void* { return new State(*static_cast<const State*>(s)); };
  f.type = &typeid(State);
  f.save = [](const void* s) {
    std::vector<std::byte> bytes;
    append(*static_cast<const State*>(s), bytes);
    return bytes;
  };
  f.load = [what](std::span<const std::byte> saved) -> void* {
    return new State(decode<State>(saved, what));
  };
  return f;
}

// The argument bytes of one call, from `list` (already filled by marshal()). The runtime's
// invoke() takes one contiguous span: a value of a single run is passed in place; any other
// is copied once into `scratch`.
[[nodiscard]] inline std::span<const std::byte> contiguous(const gather_list& list,
                                                           std::vector<std::byte>& scratch) {
  const std::span<const gather_entry> entries = list.entries();
  if (entries.empty()) return {};
  if (entries.size() == 1) return {static_cast<const std::byte*>(entries[0].data), entries[0].size};
  scratch.resize(list.bytes());
  list.copy_to(scratch.data());
  return scratch;
}

// A blocking call of operation `op` (named `name`) on `target`, marshaling `argument`
// through `list` and unmarshaling the result as Result. Errors: the runtime's (see
// iso/object.hpp), and invalid_argument for a result that does not unmarshal as Result.
template <class Result, class Argument>
Result call(object& target, operation_id op, std::string_view name, const Argument& argument,
            gather_list& list, std::vector<std::byte>& scratch) {
  marshal(argument, list);
  const std::vector<std::byte> result = target.invoke(op, contiguous(list, scratch));
  return decode<Result>(result,
                        std::string(target.type_name()) + "." + std::string(name) + " result");
}

// The non-blocking form of call(): starts the call (see iso::object::start) and returns a
// pending result whose get() unmarshals it as Result. The argument is copied by the runtime
// before this returns, so `list` and `scratch` may be reused at once.
template <class Result, class Argument>
pending<Result> start(object& target, operation_id op, std::string_view name,
                      const Argument& argument, gather_list& list,
                      std::vector<std::byte>& scratch) {
  marshal(argument, list);
  object_call started = target.start(op, contiguous(list, scratch));
  return {std::move(started),
          [what = std::string(target.type_name()) + "." + std::string(name) + " result"](
              const std::vector<std::byte>& bytes) { return decode<Result>(bytes, what); }};
}

// start() inside an isochron (see iso::object::start(isochron&, ...)): the write joins the
// open isochron `in`; refused as that says (a read, a guarded write, a single copy, the
// sequencer order).
template <class Result, class Argument>
pending<Result> start(isochron& in, object& target, operation_id op, std::string_view name,
                      const Argument& argument, gather_list& list,
                      std::vector<std::byte>& scratch) {
  marshal(argument, list);
  object_call started = target.start(in, op, contiguous(list, scratch));
  return {std::move(started),
          [what = std::string(target.type_name()) + "." + std::string(name) + " result"](
              const std::vector<std::byte>& bytes) { return decode<Result>(bytes, what); }};
}

}  // namespace iso::generated
