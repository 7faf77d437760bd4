// The checks protoc-gen-iso makes on a .proto file before generating anything. Each problem
// is one line naming the file, the element (message, field, service or rpc, by full name)
// and what is wrong; protoc prints them and exits non-zero.
//
// Checked: the file is proto3; no field is a map, a member of a oneof, a group, a type from
// google/protobuf/ (no plain types exist for them) or a message that contains itself; an
// object type (a service with option (iso.object)) names a state message that exists, a
// read-write ratio that is not negative, and only unary rpcs; each of its rpcs says read or
// write, has a non-negative frequency, and guard alternatives with distinct identifier
// names whose read paths name fields of the state ("state.f") or argument ("arg.f") and
// whose write paths name state fields; an rpc marked read has no alternative that writes (a
// write marked read); and (iso.operation) appears only on rpcs of object types. Then, when
// all of that holds, the names the generator would make (idl_names.hpp).
#pragma once

#include <google/protobuf/descriptor.h>

#include <string>
#include <vector>

namespace iso::codegen {

// Every problem found in `file`, in declaration order; empty when it can be generated.
std::vector<std::string> idl_problems(const google::protobuf::FileDescriptor* file);

// The state message of an object-type service, resolved as idl_check does (by full name, then
// relative to the service's package); null when it does not exist.
const google::protobuf::Descriptor* state_message(const google::protobuf::ServiceDescriptor* s);

}  // namespace iso::codegen
