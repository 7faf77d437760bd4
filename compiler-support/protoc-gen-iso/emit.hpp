// The text protoc-gen-iso writes for one .proto file: the header (plain types, the
// marshaling triple's declarations, object-type declarations) and the source (marshaling
// and the object types' descriptor tables). The file has passed idl_check.
#pragma once

#include <google/protobuf/descriptor.h>

#include <string>

#include "compiler-support/protoc-gen-iso/model.hpp"

namespace iso::codegen {

std::string header_text(const google::protobuf::FileDescriptor* file);
std::string source_text(const google::protobuf::FileDescriptor* file);

// Parts, one emitter each.
std::string struct_declaration(const message_model& m);   // emit_types.cpp
std::string marshal_definitions(const message_model& m);  // emit_marshal.cpp
std::string object_type_declaration(
    const google::protobuf::ServiceDescriptor* s);  // emit_object_type.cpp
std::string object_type_definition(const google::protobuf::ServiceDescriptor* s);
std::string object_api_declaration(
    const google::protobuf::ServiceDescriptor* s);  // emit_object_api.cpp
std::string object_api_definition(const google::protobuf::ServiceDescriptor* s);

// A C++ string literal holding `text`.
std::string quoted(const std::string& text);

}  // namespace iso::codegen
