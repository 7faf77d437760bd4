// The description of a shared-object type that protoc-gen-iso generates for each service
// marked `option (iso.object)` in a .proto file: its state message, placement hint, and one
// entry per operation (id, name, read or write, guard alternatives, argument and result
// types). The object runtime reads it to register the type and dispatch operations by id.
//
//   const iso::object_type_descriptor& t = demo::plain::CounterObject::descriptor();
//   for (const iso::operation_descriptor& op : t.operations)
//     std::printf("%u %s %s\n", op.id, std::string(op.name).c_str(),
//                 op.kind == iso::operation_kind::read ? "read" : "write");
//
// The generated type also names each operation as a nested struct, for typed code:
//   using add = demo::plain::CounterObject::Add;   // add::id, add::argument, add::result
//
// Descriptors are constants with static storage: no allocation, no lifetime to manage,
// safe to read from any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "iso/operation_kind.hpp"

namespace iso {

// Where the runtime should keep an object of the type (the IDL's iso.Placement), a hint.
enum class placement_hint : std::uint8_t {
  automatic = 0,   // decided from read and write counts at run time
  replicated = 1,  // a copy on every node
  single = 2,      // one copy; other nodes call it remotely
};

// One guard alternative: the condition named `name` may read the fields `reads`, and the
// alternative's body may write the state fields `writes`. Fields are paths
// "state.<field>..." or "arg.<field>...", checked against the messages by the generator.
struct guard_alternative_descriptor {
  std::string_view name;
  std::span<const std::string_view> reads;
  std::span<const std::string_view> writes;
};

struct operation_descriptor {
  std::uint32_t id = 0;   // the rpc's index in the service, from 0
  std::string_view name;  // the rpc's name, e.g. "Add"
  operation_kind kind = operation_kind::write;
  std::span<const guard_alternative_descriptor> guards;  // empty: never waits
  double frequency = 0;            // expected share among the type's calls; 0 when unknown
  std::string_view argument_type;  // full protobuf names of the messages, e.g. "demo.Delta"
  std::string_view result_type;
};

struct object_type_descriptor {
  std::string_view name;        // the service's full name, e.g. "demo.CounterObject"
  std::string_view state_type;  // the state message's full name
  placement_hint placement = placement_hint::automatic;
  double read_write_ratio = 0;                       // expected reads per write; 0 when unknown
  std::span<const operation_descriptor> operations;  // operations[i].id == i
};

}  // namespace iso
