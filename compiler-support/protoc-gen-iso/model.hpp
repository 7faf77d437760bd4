// How protoc-gen-iso sees a message: its fields sorted into the fixed run (singular scalars,
// sent as one block straight from the struct) and the variable fields (everything else, in
// declaration order), with the C++ spelling of every type. Emitters work from this model
// only, so the wire layout is decided here and in compiler-support/README.md.
#pragma once

#include <google/protobuf/descriptor.h>

#include <cstddef>
#include <string>
#include <vector>

namespace iso::codegen {

enum class field_shape {
  fixed,             // singular scalar or enum: part of the fixed run
  optional_scalar,   // proto3 `optional` scalar or enum: std::optional<T>
  string,            // string or bytes: std::string
  optional_string,   // `optional` string or bytes: std::optional<std::string>
  repeated_scalar,   // std::vector<T> (bool as std::uint8_t)
  repeated_string,   // std::vector<std::string>
  message,           // singular message: the nested struct itself
  optional_message,  // `optional` message: std::optional<S>
  repeated_message,  // std::vector<S>
};

struct field_model {
  const google::protobuf::FieldDescriptor* descriptor = nullptr;
  field_shape shape = field_shape::fixed;
  std::string member;    // the C++ member name
  std::string cpp_type;  // the element type: scalar, enum, or struct (qualified)
  std::size_t size = 0;  // bytes of one scalar element; 0 for strings and messages
  bool is_bool = false;  // a singular bool, whose wire byte must be 0 or 1
};

struct message_model {
  const google::protobuf::Descriptor* descriptor = nullptr;
  std::string name;                   // the struct's name in the file's namespace
  std::vector<field_model> fixed;     // by size, largest first, then declaration order
  std::vector<field_model> variable;  // declaration order
  std::size_t fixed_size = 0;         // bytes of the fixed run
  std::size_t length_words = 0;       // length words in the message's own length block
};

// The C++ namespace of a file's plain types: package "a.b" gives "a::b::plain".
std::string plain_namespace(const google::protobuf::FileDescriptor* file);
// A message's or enum's name in its file's namespace: "Outer.Inner" gives "Outer_Inner".
std::string local_name(const google::protobuf::Descriptor* message);
std::string local_name(const google::protobuf::EnumDescriptor* e);
// Fully qualified: "::a::b::plain::Outer_Inner".
std::string qualified_name(const google::protobuf::Descriptor* message);
std::string qualified_name(const google::protobuf::EnumDescriptor* e);
// A name usable as a C++ identifier: a keyword gets a trailing underscore.
std::string identifier(const std::string& name);
// "dir/foo.proto" gives "dir/foo" (the generated files are that plus .iso.hpp and .iso.cpp).
std::string file_stem(const std::string& proto_name);

// Builds the model of a message whose fields passed idl_check.
message_model model_of(const google::protobuf::Descriptor* message);

// The fewest bytes any value of the message takes on the wire (what a repeated field of it
// needs per element).
std::size_t min_wire_size(const google::protobuf::Descriptor* message);

// The file's messages, nested ones included, each after every message it contains by value
// or in a vector (the order the structs must be declared in).
std::vector<const google::protobuf::Descriptor*> messages_in_declaration_order(
    const google::protobuf::FileDescriptor* file);
// The file's enums, nested ones included.
std::vector<const google::protobuf::EnumDescriptor*> enums_of(
    const google::protobuf::FileDescriptor* file);

}  // namespace iso::codegen
