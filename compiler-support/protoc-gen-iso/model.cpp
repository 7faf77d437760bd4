#include "compiler-support/protoc-gen-iso/model.hpp"

#include <algorithm>
#include <set>

#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"

namespace iso::codegen {
namespace gp = google::protobuf;

namespace {

// The scalar's C++ type and wire size; an enum is its generated enum class (4 bytes).
void scalar_type(const gp::FieldDescriptor* f, bool repeated, field_model& m) {
  switch (f->cpp_type()) {
    case gp::FieldDescriptor::CPPTYPE_INT32:
      m.cpp_type = "std::int32_t";
      m.size = 4;
      break;
    case gp::FieldDescriptor::CPPTYPE_UINT32:
      m.cpp_type = "std::uint32_t";
      m.size = 4;
      break;
    case gp::FieldDescriptor::CPPTYPE_INT64:
      m.cpp_type = "std::int64_t";
      m.size = 8;
      break;
    case gp::FieldDescriptor::CPPTYPE_UINT64:
      m.cpp_type = "std::uint64_t";
      m.size = 8;
      break;
    case gp::FieldDescriptor::CPPTYPE_FLOAT:
      m.cpp_type = "float";
      m.size = 4;
      break;
    case gp::FieldDescriptor::CPPTYPE_DOUBLE:
      m.cpp_type = "double";
      m.size = 8;
      break;
    case gp::FieldDescriptor::CPPTYPE_BOOL:
      // std::vector<bool> keeps no contiguous array to point into.
      m.cpp_type = repeated ? "std::uint8_t" : "bool";
      m.size = 1;
      m.is_bool = !repeated;
      break;
    case gp::FieldDescriptor::CPPTYPE_ENUM:
      m.cpp_type = qualified_name(f->enum_type());
      m.size = 4;
      break;
    default:
      break;
  }
}

bool is_string(const gp::FieldDescriptor* f) {
  return f->cpp_type() == gp::FieldDescriptor::CPPTYPE_STRING;
}
bool is_message(const gp::FieldDescriptor* f) {
  return f->cpp_type() == gp::FieldDescriptor::CPPTYPE_MESSAGE;
}

field_model field_of(const gp::FieldDescriptor* f) {
  field_model m;
  m.descriptor = f;
  m.member = identifier(f->name());
  const bool optional = f->has_optional_keyword();
  if (is_message(f)) {
    m.cpp_type = qualified_name(f->message_type());
    m.shape = f->is_repeated() ? field_shape::repeated_message
              : optional       ? field_shape::optional_message
                               : field_shape::message;
  } else if (is_string(f)) {
    m.cpp_type = "std::string";
    m.shape = f->is_repeated() ? field_shape::repeated_string
              : optional       ? field_shape::optional_string
                               : field_shape::string;
  } else {
    scalar_type(f, f->is_repeated(), m);
    m.shape = f->is_repeated() ? field_shape::repeated_scalar
              : optional       ? field_shape::optional_scalar
                               : field_shape::fixed;
  }
  return m;
}

void collect_messages(const gp::Descriptor* d, std::vector<const gp::Descriptor*>& out) {
  out.push_back(d);
  for (int i = 0; i < d->nested_type_count(); ++i) collect_messages(d->nested_type(i), out);
}

void collect_enums(const gp::Descriptor* d, std::vector<const gp::EnumDescriptor*>& out) {
  for (int i = 0; i < d->enum_type_count(); ++i) out.push_back(d->enum_type(i));
  for (int i = 0; i < d->nested_type_count(); ++i) collect_enums(d->nested_type(i), out);
}

// Depth-first, dependencies first; idl_check has ruled out cycles.
void visit(const gp::Descriptor* d, const gp::FileDescriptor* file,
           std::set<const gp::Descriptor*>& seen, std::vector<const gp::Descriptor*>& out) {
  if (d->file() != file || !seen.insert(d).second) return;
  for (int i = 0; i < d->field_count(); ++i) {
    if (is_message(d->field(i))) visit(d->field(i)->message_type(), file, seen, out);
  }
  out.push_back(d);
}

std::string scoped_name(const std::string& full_name, const std::string& package) {
  std::string local = package.empty() ? full_name : full_name.substr(package.size() + 1);
  return absl::StrReplaceAll(local, {{".", "_"}});
}

}  // namespace

std::string plain_namespace(const gp::FileDescriptor* file) {
  std::string ns;
  for (absl::string_view part : absl::StrSplit(file->package(), '.', absl::SkipEmpty())) {
    ns += identifier(std::string(part)) + "::";
  }
  return ns + "plain";
}

std::string local_name(const gp::Descriptor* message) {
  return scoped_name(message->full_name(), message->file()->package());
}
std::string local_name(const gp::EnumDescriptor* e) {
  return scoped_name(e->full_name(), e->file()->package());
}
std::string qualified_name(const gp::Descriptor* message) {
  return "::" + plain_namespace(message->file()) + "::" + local_name(message);
}
std::string qualified_name(const gp::EnumDescriptor* e) {
  return "::" + plain_namespace(e->file()) + "::" + local_name(e);
}

std::string identifier(const std::string& name) {
  static const std::set<std::string> keywords = {
      "alignas",      "alignof",     "and",           "asm",
      "auto",         "bool",        "break",         "case",
      "catch",        "char",        "class",         "concept",
      "const",        "consteval",   "constexpr",     "constinit",
      "const_cast",   "continue",    "co_await",      "co_return",
      "co_yield",     "decltype",    "default",       "delete",
      "do",           "double",      "else",          "enum",
      "explicit",     "export",      "extern",        "false",
      "float",        "for",         "friend",        "goto",
      "if",           "inline",      "int",           "long",
      "mutable",      "namespace",   "new",           "noexcept",
      "not",          "nullptr",     "operator",      "or",
      "private",      "protected",   "public",        "register",
      "requires",     "return",      "short",         "signed",
      "sizeof",       "static",      "static_assert", "struct",
      "switch",       "template",    "this",          "throw",
      "true",         "try",         "typedef",       "typeid",
      "typename",     "union",       "unsigned",      "using",
      "virtual",      "void",        "volatile",      "while",
      "xor",          "and_eq",      "bitand",        "bitor",
      "compl",        "not_eq",      "or_eq",         "xor_eq",
      "char8_t",      "char16_t",    "char32_t",      "wchar_t",
      "thread_local", "static_cast", "dynamic_cast",  "reinterpret_cast"};
  return keywords.count(name) != 0 ? name + "_" : name;
}

std::string file_stem(const std::string& proto_name) {
  const std::string suffix = ".proto";
  if (proto_name.size() > suffix.size() &&
      proto_name.compare(proto_name.size() - suffix.size(), suffix.size(), suffix) == 0) {
    return proto_name.substr(0, proto_name.size() - suffix.size());
  }
  return proto_name;
}

message_model model_of(const gp::Descriptor* message) {
  message_model m;
  m.descriptor = message;
  m.name = local_name(message);
  for (int i = 0; i < message->field_count(); ++i) {
    field_model f = field_of(message->field(i));
    if (f.shape == field_shape::fixed) {
      m.fixed.push_back(f);
      m.fixed_size += f.size;
    } else {
      m.variable.push_back(f);
      if (f.shape != field_shape::message) ++m.length_words;
    }
  }
  // Largest first: every scalar is 8, 4 or 1 bytes and aligned to its size, so the run has
  // no padding inside and is one contiguous block of the struct.
  std::stable_sort(m.fixed.begin(), m.fixed.end(),
                   [](const field_model& a, const field_model& b) { return a.size > b.size; });
  return m;
}

std::size_t min_wire_size(const gp::Descriptor* message) {
  message_model m = model_of(message);
  std::size_t size = m.fixed_size + m.length_words * 8;
  for (const field_model& f : m.variable) {
    if (f.shape == field_shape::message) size += min_wire_size(f.descriptor->message_type());
  }
  return size;
}

std::vector<const gp::Descriptor*> messages_in_declaration_order(const gp::FileDescriptor* file) {
  std::vector<const gp::Descriptor*> all;
  for (int i = 0; i < file->message_type_count(); ++i) collect_messages(file->message_type(i), all);
  std::set<const gp::Descriptor*> seen;
  std::vector<const gp::Descriptor*> ordered;
  for (const gp::Descriptor* d : all) visit(d, file, seen, ordered);
  return ordered;
}

std::vector<const gp::EnumDescriptor*> enums_of(const gp::FileDescriptor* file) {
  std::vector<const gp::EnumDescriptor*> out;
  out.reserve(static_cast<std::size_t>(file->enum_type_count()));
  for (int i = 0; i < file->enum_type_count(); ++i) out.push_back(file->enum_type(i));
  for (int i = 0; i < file->message_type_count(); ++i) collect_enums(file->message_type(i), out);
  return out;
}

}  // namespace iso::codegen
