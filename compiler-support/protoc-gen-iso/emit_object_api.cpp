// What users of an object type write against (a service with option (iso.object)): the
// abstract class they fill in (<S>Base: one body per operation, or a guard and a body per
// guard alternative), the function that builds the runtime's iso::object_type from an
// instance of it (the dispatch skeleton), and the typed proxy (<S>Proxy) over iso::object.
// The shared pieces live in iso/generated_object.hpp.
#include "absl/strings/str_cat.h"
#include "compiler-support/protoc-gen-iso/emit.hpp"
#include "compiler-support/protoc-gen-iso/idl_check.hpp"
#include "iso/options.pb.h"

namespace iso::codegen {
namespace gp = google::protobuf;

namespace {

bool is_read(const gp::MethodDescriptor* m) {
  return m->options().GetExtension(iso::operation).kind() == iso::OPERATION_READ;
}

// Only unguarded writes may join an isochron: the proxy offers the form for them alone.
bool joins_isochrons(const gp::MethodDescriptor* m) {
  return !is_read(m) && m->options().GetExtension(iso::operation).guard().empty();
}

// The state parameter of a body: a read gets the state it must leave as it was.
std::string state_parameter(const gp::MethodDescriptor* m, const std::string& state) {
  return is_read(m) ? absl::StrCat("const ", state, "& state") : absl::StrCat(state, "& state");
}

std::string guard_name(const gp::MethodDescriptor* m, const iso::GuardAlternative& alt) {
  return absl::StrCat(m->name(), "_guard_", alt.name());
}
std::string body_name(const gp::MethodDescriptor* m, const iso::GuardAlternative& alt) {
  return absl::StrCat(m->name(), "_", alt.name());
}

}  // namespace

std::string object_api_declaration(const gp::ServiceDescriptor* s) {
  if (!s->options().HasExtension(iso::object)) return "";
  const std::string state = qualified_name(state_message(s));
  const std::string base = s->name() + "Base";
  std::string out = absl::StrCat(
      "// The implementation of ", s->full_name(),
      " the user fills in: one body per operation, or a guard and a body per guard\n"
      "// alternative (tried in declaration order). Guards must not change anything; a read's\n"
      "// body gets the state it must leave as it was. An exception thrown by a guard or body\n"
      "// makes the call fail with iso::error_code::aborted, the state as it was.\n"
      "class ",
      base, " {\n public:\n  using state_type = ", state, ";\n  ", base, "() = default;\n  ", base,
      "(const ", base, "&) = default;\n  ", base, "& operator=(const ", base, "&) = default;\n  ",
      base, "(", base, "&&) = default;\n  ", base, "& operator=(", base,
      "&&) = default;\n  virtual ~", base, "() = default;\n\n");
  for (int i = 0; i < s->method_count(); ++i) {
    const gp::MethodDescriptor* m = s->method(i);
    const iso::OperationOptions& op = m->options().GetExtension(iso::operation);
    const std::string arg = qualified_name(m->input_type());
    const std::string result = qualified_name(m->output_type());
    absl::StrAppend(&out, "  // ", m->name(), " (", is_read(m) ? "read" : "write", ").\n");
    if (op.guard().empty()) {
      absl::StrAppend(&out, "  virtual ", result, " ", m->name(), "(", state_parameter(m, state),
                      ", const ", arg, "& arg) = 0;\n");
    }
    for (const iso::GuardAlternative& alt : op.guard()) {
      absl::StrAppend(&out, "  [[nodiscard]] virtual bool ", guard_name(m, alt), "(const ", state,
                      "& state, const ", arg, "& arg) const = 0;\n  virtual ", result, " ",
                      body_name(m, alt), "(", state_parameter(m, state), ", const ", arg,
                      "& arg) = 0;\n");
    }
  }
  absl::StrAppend(&out, "};\n\n", "// The runtime type of ", s->full_name(),
                  " (named so), dispatching to `impl`, which it\n", "// shares; states are ", state,
                  " values, saved by marshaling (so objects migrate).\n",
                  "// A null `impl` is iso::error(invalid_argument).\n",
                  "[[nodiscard]] ::iso::object_type make_object_type(std::shared_ptr<", base,
                  "> impl);\n\n");

  const std::string proxy = s->name() + "Proxy";
  absl::StrAppend(&out, "// Typed calls on an object of type ", s->full_name(),
                  " (made with make_object_type): Op() blocks;\n"
                  "// OpAsync() starts the call and returns its pending result "
                  "(iso::object::start);\n"
                  "// for an unguarded write, OpAsync(isochron&, arg) adds it to an open "
                  "isochron\n// (iso::object::start(isochron&, ...)).\n"
                  "// Errors are the runtime's (iso/object.hpp). As iso::object, used by one "
                  "thread at a time.\nclass ",
                  proxy, " {\n public:\n  explicit ", proxy,
                  "(::iso::object target) : object_(std::move(target)) {}\n"
                  "  [[nodiscard]] ::iso::object& object() noexcept { return object_; }\n\n");
  for (int i = 0; i < s->method_count(); ++i) {
    const gp::MethodDescriptor* m = s->method(i);
    absl::StrAppend(&out, "  ", qualified_name(m->output_type()), " ", m->name(), "(const ",
                    qualified_name(m->input_type()), "& arg);\n");
    absl::StrAppend(&out, "  [[nodiscard]] ::iso::pending<", qualified_name(m->output_type()), "> ",
                    m->name(), "Async(const ", qualified_name(m->input_type()), "& arg);\n");
    if (joins_isochrons(m)) {
      absl::StrAppend(&out, "  [[nodiscard]] ::iso::pending<", qualified_name(m->output_type()),
                      "> ", m->name(), "Async(::iso::isochron& in, const ",
                      qualified_name(m->input_type()), "& arg);\n");
    }
  }
  absl::StrAppend(&out,
                  "\n private:\n  ::iso::object object_;\n"
                  "  ::iso::gather_list list_;           // reused by every call\n"
                  "  std::vector<std::byte> scratch_;  // arguments of several runs, copied\n"
                  "};\n\n");
  return out;
}

std::string object_api_definition(const gp::ServiceDescriptor* s) {
  if (!s->options().HasExtension(iso::object)) return "";
  const std::string state = qualified_name(state_message(s));
  const std::string base = s->name() + "Base";
  std::string out = absl::StrCat(
      "::iso::object_type make_object_type(std::shared_ptr<", base, "> impl) {\n",
      "  if (!impl) {\n    throw ::iso::error(::iso::error_code::invalid_argument, ",
      quoted("make_object_type(" + s->full_name() + "): no implementation (null)"), ");\n  }\n",
      "  ::iso::object_type type(", quoted(s->full_name()),
      ", ::iso::generated::state_functions_of<", state, ">(", quoted(s->full_name()), "));\n");
  for (int i = 0; i < s->method_count(); ++i) {
    const gp::MethodDescriptor* m = s->method(i);
    const iso::OperationOptions& op = m->options().GetExtension(iso::operation);
    const std::string arg = qualified_name(m->input_type());
    const std::string cast = is_read(m) ? absl::StrCat("*static_cast<const ", state, "*>(s)")
                                        : absl::StrCat("*static_cast<", state, "*>(s)");
    absl::StrAppend(&out, "  {\n    ::iso::operation op;\n    op.id = ", i,
                    ";\n    op.name = ", quoted(m->name()), ";\n    op.kind = ",
                    is_read(m) ? "::iso::operation_kind::read" : "::iso::operation_kind::write",
                    ";\n    op.unmarshal = [](std::span<const std::byte> bytes) {\n"
                    "      return ::iso::decoded_arguments(::iso::generated::decode<",
                    arg, ">(bytes, ", quoted(s->full_name() + "." + m->name() + " argument"),
                    "));\n    };\n");
    if (op.guard().empty()) {
      absl::StrAppend(&out, "    op.alternatives.push_back({.guard = {}, .body =\n",
                      "      [impl](void* s, const ::iso::decoded_arguments& a, "
                      "std::vector<std::byte>& out) {\n        ::iso::generated::append(impl->",
                      m->name(), "(", cast, ", std::any_cast<const ", arg,
                      "&>(a)), out);\n      }});\n");
    }
    for (const iso::GuardAlternative& alt : op.guard()) {
      absl::StrAppend(
          &out, "    op.alternatives.push_back({.guard =\n",
          "      [impl](const void* s, const ::iso::decoded_arguments& a) {\n        return impl->",
          guard_name(m, alt), "(*static_cast<const ", state, "*>(s), std::any_cast<const ", arg,
          "&>(a));\n      }, .body =\n",
          "      [impl](void* s, const ::iso::decoded_arguments& a, "
          "std::vector<std::byte>& out) {\n        ::iso::generated::append(impl->",
          body_name(m, alt), "(", cast, ", std::any_cast<const ", arg,
          "&>(a)), out);\n      }});\n");
    }
    absl::StrAppend(&out, "    type.add(std::move(op));\n  }\n");
  }
  absl::StrAppend(&out, "  return type;\n}\n\n");

  const std::string proxy = s->name() + "Proxy";
  for (int i = 0; i < s->method_count(); ++i) {
    const gp::MethodDescriptor* m = s->method(i);
    const std::string result = qualified_name(m->output_type());
    absl::StrAppend(&out, result, " ", proxy, "::", m->name(), "(const ",
                    qualified_name(m->input_type()), "& arg) {\n  return ::iso::generated::call<",
                    result, ">(object_, ", i, ", ", quoted(m->name()),
                    ", arg, list_, scratch_);\n}\n\n");
    absl::StrAppend(&out, "::iso::pending<", result, "> ", proxy, "::", m->name(), "Async(const ",
                    qualified_name(m->input_type()), "& arg) {\n  return ::iso::generated::start<",
                    result, ">(object_, ", i, ", ", quoted(m->name()),
                    ", arg, list_, scratch_);\n}\n\n");
    if (joins_isochrons(m)) {
      absl::StrAppend(&out, "::iso::pending<", result, "> ", proxy, "::", m->name(),
                      "Async(::iso::isochron& in, const ", qualified_name(m->input_type()),
                      "& arg) {\n  return ::iso::generated::start<", result, ">(in, object_, ", i,
                      ", ", quoted(m->name()), ", arg, list_, scratch_);\n}\n\n");
    }
  }
  return out;
}

}  // namespace iso::codegen
