// An object type (a service with option (iso.object)): a struct naming the state and each
// operation, and the descriptor table the object runtime reads. Services without the option
// generate nothing. The proxy, dispatch skeleton and abstract class are emit_object_api.cpp's.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler-support/protoc-gen-iso/emit.hpp"
#include "compiler-support/protoc-gen-iso/idl_check.hpp"
#include "iso/options.pb.h"

namespace iso::codegen {
namespace gp = google::protobuf;

namespace {

std::string kind_of(const iso::OperationOptions& op) {
  return op.kind() == iso::OPERATION_READ ? "::iso::operation_kind::read"
                                          : "::iso::operation_kind::write";
}

std::string placement_of(const iso::ObjectOptions& o) {
  switch (o.placement()) {
    case iso::PLACEMENT_REPLICATED:
      return "::iso::placement_hint::replicated";
    case iso::PLACEMENT_SINGLE:
      return "::iso::placement_hint::single";
    default:
      return "::iso::placement_hint::automatic";
  }
}

std::string number(double d) { return absl::StrFormat("%.17g", d); }

// `constexpr std::string_view <name>[] = {...};`, or "{}" as the span when empty.
std::string string_table(std::string& out, const std::string& name,
                         const google::protobuf::RepeatedPtrField<std::string>& items) {
  if (items.empty()) return "{}";
  absl::StrAppend(&out, "constexpr std::string_view ", name, "[] = {");
  for (const std::string& s : items) absl::StrAppend(&out, quoted(s), ", ");
  absl::StrAppend(&out, "};\n");
  return name;
}

}  // namespace

std::string object_type_declaration(const gp::ServiceDescriptor* s) {
  if (!s->options().HasExtension(iso::object)) return "";
  const gp::Descriptor* state = state_message(s);
  std::string out =
      absl::StrCat("// Object type ", s->full_name(), ": the state is ", state->full_name(),
                   ".\nstruct ", s->name(), " {\n  using state = ", qualified_name(state), ";\n");
  for (int i = 0; i < s->method_count(); ++i) {
    const gp::MethodDescriptor* m = s->method(i);
    const iso::OperationOptions& op = m->options().GetExtension(iso::operation);
    absl::StrAppend(&out, "  struct ", m->name(), " {\n    static constexpr std::uint32_t id = ", i,
                    ";\n    static constexpr ::iso::operation_kind kind = ", kind_of(op),
                    ";\n    using argument = ", qualified_name(m->input_type()),
                    ";\n    using result = ", qualified_name(m->output_type()), ";\n  };\n");
  }
  absl::StrAppend(&out,
                  "  // The table the object runtime registers the type with; "
                  "operations[i].id == i.\n"
                  "  [[nodiscard]] static const ::iso::object_type_descriptor& descriptor();\n"
                  "};\n\n");
  return out;
}

std::string object_type_definition(const gp::ServiceDescriptor* s) {
  if (!s->options().HasExtension(iso::object)) return "";
  const iso::ObjectOptions& object = s->options().GetExtension(iso::object);
  const std::string prefix = s->name() + "_";
  std::string tables = "namespace {\n\n";
  std::string operations;
  for (int i = 0; i < s->method_count(); ++i) {
    const gp::MethodDescriptor* m = s->method(i);
    const iso::OperationOptions& op = m->options().GetExtension(iso::operation);
    std::string guards = "{}";
    if (!op.guard().empty()) {
      std::string alternatives;
      for (int g = 0; g < op.guard_size(); ++g) {
        const iso::GuardAlternative& alt = op.guard(g);
        const std::string base = absl::StrCat(prefix, m->name(), "_", g);
        const std::string reads = string_table(tables, base + "_reads", alt.reads());
        const std::string writes = string_table(tables, base + "_writes", alt.writes());
        absl::StrAppend(&alternatives, "    {.name = ", quoted(alt.name()), ", .reads = ", reads,
                        ", .writes = ", writes, "},\n");
      }
      guards = absl::StrCat(prefix, m->name(), "_guards");
      absl::StrAppend(&tables, "constexpr ::iso::guard_alternative_descriptor ", guards, "[] = {\n",
                      alternatives, "};\n");
    }
    absl::StrAppend(&operations, "    {.id = ", i, ", .name = ", quoted(m->name()),
                    ", .kind = ", kind_of(op), ", .guards = ", guards,
                    ", .frequency = ", number(op.frequency()),
                    ", .argument_type = ", quoted(m->input_type()->full_name()),
                    ", .result_type = ", quoted(m->output_type()->full_name()), "},\n");
  }
  std::string operations_span = "{}";
  if (s->method_count() > 0) {
    operations_span = prefix + "operations";
    absl::StrAppend(&tables, "constexpr ::iso::operation_descriptor ", operations_span, "[] = {\n",
                    operations, "};\n");
  }
  absl::StrAppend(&tables, "\n}  // namespace\n\n");
  return absl::StrCat(
      tables, "const ::iso::object_type_descriptor& ", s->name(), "::descriptor() {\n",
      "  static constexpr ::iso::object_type_descriptor descriptor{\n",
      "      .name = ", quoted(s->full_name()), ",\n",
      "      .state_type = ", quoted(state_message(s)->full_name()), ",\n",
      "      .placement = ", placement_of(object), ",\n",
      "      .read_write_ratio = ", number(object.read_write_ratio()), ",\n",
      "      .operations = ", operations_span, ",\n  };\n  return descriptor;\n}\n\n");
}

}  // namespace iso::codegen
