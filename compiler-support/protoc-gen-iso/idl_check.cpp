#include "compiler-support/protoc-gen-iso/idl_check.hpp"

#include <cctype>
#include <cmath>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "compiler-support/protoc-gen-iso/idl_names.hpp"
#include "iso/options.pb.h"

namespace iso::codegen {
namespace gp = google::protobuf;

namespace {

class checker {
 public:
  explicit checker(const gp::FileDescriptor* file) : file_(file) {}

  std::vector<std::string> run() {
    if (file_->syntax() != gp::FileDescriptor::SYNTAX_PROTO3) {
      problem("file", file_->name(), "only proto3 files are supported");
    }
    for (int i = 0; i < file_->message_type_count(); ++i) check_message(file_->message_type(i));
    for (int i = 0; i < file_->service_count(); ++i) check_service(file_->service(i));
    // Names only once the rest is sound: they are generated from the declarations.
    if (problems_.empty()) problems_ = name_problems(file_);
    return std::move(problems_);
  }

 private:
  void problem(absl::string_view kind, absl::string_view element, absl::string_view what) {
    problems_.push_back(absl::StrCat(file_->name(), ": ", kind, " ", element, ": ", what));
  }

  void check_message(const gp::Descriptor* d) {
    for (int i = 0; i < d->field_count(); ++i) check_field(d->field(i));
    for (int i = 0; i < d->nested_type_count(); ++i) {
      // Map entries are reported at their field.
      if (!d->nested_type(i)->options().map_entry()) check_message(d->nested_type(i));
    }
  }

  void check_field(const gp::FieldDescriptor* f) {
    if (f->is_map()) {
      problem("field", f->full_name(),
              "map fields are not supported; use a repeated message of key and value");
      return;
    }
    if (f->real_containing_oneof() != nullptr) {
      problem("field", f->full_name(),
              absl::StrCat("oneof is not supported (oneof ", f->real_containing_oneof()->name(),
                           "); use proto3 optional fields"));
    }
    if (f->type() == gp::FieldDescriptor::TYPE_GROUP) {
      problem("field", f->full_name(), "groups are not supported");
      return;
    }
    if (f->cpp_type() != gp::FieldDescriptor::CPPTYPE_MESSAGE &&
        f->cpp_type() != gp::FieldDescriptor::CPPTYPE_ENUM) {
      return;
    }
    const gp::FileDescriptor* from = f->cpp_type() == gp::FieldDescriptor::CPPTYPE_MESSAGE
                                         ? f->message_type()->file()
                                         : f->enum_type()->file();
    if (absl::StartsWith(from->name(), "google/protobuf/")) {
      problem("field", f->full_name(),
              absl::StrCat("its type comes from ", from->name(),
                           ", for which protoc-gen-iso generates no plain types"));
      return;
    }
    if (f->cpp_type() == gp::FieldDescriptor::CPPTYPE_MESSAGE) {
      std::vector<const gp::Descriptor*> path;
      if (contains(f->message_type(), f->containing_type(), path)) {
        problem("field", f->full_name(),
                absl::StrCat("message ", f->containing_type()->full_name(),
                             " contains itself through this field (recursive types are not "
                             "supported)"));
      }
    }
  }

  // True when `outer` holds `target`, at any depth.
  bool contains(const gp::Descriptor* outer, const gp::Descriptor* target,
                std::vector<const gp::Descriptor*>& path) {
    if (outer == target) return true;
    for (const gp::Descriptor* p : path) {
      if (p == outer) return false;  // a cycle that does not pass through target
    }
    path.push_back(outer);
    for (int i = 0; i < outer->field_count(); ++i) {
      const gp::FieldDescriptor* f = outer->field(i);
      if (f->cpp_type() == gp::FieldDescriptor::CPPTYPE_MESSAGE &&
          contains(f->message_type(), target, path)) {
        return true;
      }
    }
    path.pop_back();
    return false;
  }

  void check_service(const gp::ServiceDescriptor* s) {
    if (!s->options().HasExtension(iso::object)) {
      for (int i = 0; i < s->method_count(); ++i) {
        if (s->method(i)->options().HasExtension(iso::operation)) {
          problem("rpc", s->method(i)->full_name(),
                  absl::StrCat("option (iso.operation) on an rpc of service ", s->full_name(),
                               ", which is not an object type (it has no option (iso.object))"));
        }
      }
      return;
    }
    const iso::ObjectOptions& object = s->options().GetExtension(iso::object);
    const gp::Descriptor* state = state_message(s);
    if (object.state().empty()) {
      problem("service", s->full_name(), "option (iso.object) names no state message");
    } else if (state == nullptr) {
      problem("service", s->full_name(),
              absl::StrCat("state message \"", object.state(), "\" does not exist"));
    } else if (absl::StartsWith(state->file()->name(), "google/protobuf/")) {
      problem("service", s->full_name(),
              absl::StrCat("state message ", state->full_name(),
                           " comes from google/protobuf/, for which protoc-gen-iso generates "
                           "no plain types"));
    }
    if (!(object.read_write_ratio() >= 0) || !std::isfinite(object.read_write_ratio())) {
      problem("service", s->full_name(),
              absl::StrCat("read_write_ratio must be a finite number, not negative (it is ",
                           object.read_write_ratio(), ")"));
    }
    for (int i = 0; i < s->method_count(); ++i) check_operation(s->method(i), state);
  }

  void check_operation(const gp::MethodDescriptor* m, const gp::Descriptor* state) {
    if (m->client_streaming() || m->server_streaming()) {
      problem("rpc", m->full_name(), "streaming rpcs are not supported");
    }
    for (const gp::Descriptor* type : {m->input_type(), m->output_type()}) {
      if (absl::StartsWith(type->file()->name(), "google/protobuf/")) {
        problem("rpc", m->full_name(),
                absl::StrCat("its type ", type->full_name(), " comes from ", type->file()->name(),
                             ", for which protoc-gen-iso generates no plain types; declare "
                             "your own message"));
      }
    }
    const iso::OperationOptions& op = m->options().GetExtension(iso::operation);
    if (op.kind() != iso::OPERATION_READ && op.kind() != iso::OPERATION_WRITE) {
      problem("rpc", m->full_name(),
              "the operation is neither read nor write: give it option (iso.operation) = "
              "{ kind: OPERATION_READ } or { kind: OPERATION_WRITE }");
    }
    if (!(op.frequency() >= 0) || !std::isfinite(op.frequency())) {
      problem("rpc", m->full_name(),
              absl::StrCat("frequency must be a finite number, not negative (it is ",
                           op.frequency(), ")"));
    }
    std::set<std::string> names;
    for (const iso::GuardAlternative& g : op.guard()) {
      const std::string alt = absl::StrCat("guard alternative \"", g.name(), "\"");
      if (!is_identifier(g.name())) {
        problem("rpc", m->full_name(),
                absl::StrCat(alt, ": a guard alternative's name must be an identifier"));
      } else if (!names.insert(g.name()).second) {
        problem("rpc", m->full_name(), absl::StrCat(alt, " appears twice"));
      }
      for (const std::string& path : g.reads()) {
        std::string why = resolve(path, state, m->input_type(), /*state_only=*/false);
        if (!why.empty()) {
          problem("rpc", m->full_name(), absl::StrCat(alt, " reads \"", path, "\": ", why));
        }
      }
      for (const std::string& path : g.writes()) {
        std::string why = resolve(path, state, m->input_type(), /*state_only=*/true);
        if (!why.empty()) {
          problem("rpc", m->full_name(), absl::StrCat(alt, " writes \"", path, "\": ", why));
        }
      }
      if (op.kind() == iso::OPERATION_READ && !g.writes().empty()) {
        problem("rpc", m->full_name(),
                absl::StrCat("marked OPERATION_READ, but its ", alt, " writes \"", g.writes(0),
                             "\" (a write marked read: make it OPERATION_WRITE)"));
      }
    }
  }

  // Empty when `path` names a field; otherwise why it does not.
  static std::string resolve(const std::string& path, const gp::Descriptor* state,
                             const gp::Descriptor* argument, bool state_only) {
    std::vector<std::string> parts = absl::StrSplit(path, '.');
    if (parts.size() < 2 || (parts[0] != "state" && parts[0] != "arg")) {
      return state_only ? "a written field is named \"state.<field>\""
                        : "a field is named \"state.<field>\" or \"arg.<field>\"";
    }
    if (parts[0] == "arg" && state_only) return "only fields of the state can be written";
    const gp::Descriptor* at = parts[0] == "state" ? state : argument;
    if (at == nullptr) return "the state message does not exist";
    for (std::size_t i = 1; i < parts.size(); ++i) {
      const gp::FieldDescriptor* f = at->FindFieldByName(parts[i]);
      if (f == nullptr) {
        return absl::StrCat("names no field: ", at->full_name(), " has no field \"", parts[i],
                            "\"");
      }
      if (i + 1 < parts.size()) {
        if (f->cpp_type() != gp::FieldDescriptor::CPPTYPE_MESSAGE || f->is_repeated()) {
          return absl::StrCat(f->full_name(), " is not a singular message, so \"", parts[i + 1],
                              "\" cannot follow it");
        }
        at = f->message_type();
      }
    }
    return "";
  }

  static bool is_identifier(const std::string& s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])) != 0) return false;
    for (char c : s) {
      if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_') return false;
    }
    return true;
  }

  const gp::FileDescriptor* file_;
  std::vector<std::string> problems_;
};

}  // namespace

std::vector<std::string> idl_problems(const gp::FileDescriptor* file) {
  return checker(file).run();
}

const gp::Descriptor* state_message(const gp::ServiceDescriptor* s) {
  const std::string& name = s->options().GetExtension(iso::object).state();
  if (name.empty()) return nullptr;
  const gp::DescriptorPool* pool = s->file()->pool();
  const std::string& package = s->file()->package();
  if (!package.empty()) {
    if (const gp::Descriptor* d = pool->FindMessageTypeByName(package + "." + name)) return d;
  }
  return pool->FindMessageTypeByName(name);
}

}  // namespace iso::codegen
