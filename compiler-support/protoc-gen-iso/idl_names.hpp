// The names protoc-gen-iso would generate from a .proto file, checked before it generates
// anything: a name that is a C++ keyword, or two elements whose generated names are the
// same, would give C++ that does not compile. Each problem is one line naming the file, the
// element (by full name) and what it collides with; idl_problems() reports them.
//
// Checked: message, enum, service and rpc names that are C++ keywords (field, enum value and
// package names are renamed instead: `delete` becomes `delete_`); at namespace scope, the
// plain types (nested ones flattened: Outer.Inner is Outer_Inner) against each other and
// against what an object type adds (<S>, <S>Base, <S>Proxy); in an object type, its rpcs
// against each other's generated members (Op, OpAsync, guards and bodies) and against the
// members the generator adds (state, descriptor, object, state_type, ...); a field named like
// a message or enum of the file (the member would hide the type in its struct).
#pragma once

#include <google/protobuf/descriptor.h>

#include <string>
#include <vector>

namespace iso::codegen {

// Every name problem of `file`, in declaration order.
std::vector<std::string> name_problems(const google::protobuf::FileDescriptor* file);

}  // namespace iso::codegen
