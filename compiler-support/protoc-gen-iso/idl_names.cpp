#include "compiler-support/protoc-gen-iso/idl_names.hpp"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "compiler-support/protoc-gen-iso/model.hpp"
#include "iso/options.pb.h"

namespace iso::codegen {
namespace gp = google::protobuf;

namespace {

bool is_keyword(const std::string& name) { return identifier(name) != name; }

// Members the generator puts beside the rpcs' own in an object type's struct, base class and
// proxy (emit_object_type.cpp, emit_object_api.cpp).
const std::set<std::string>& generated_members() {
  static const std::set<std::string> names = {"state",   "descriptor", "state_type", "object",
                                              "object_", "list_",      "scratch_"};
  return names;
}

class name_checker {
 public:
  explicit name_checker(const gp::FileDescriptor* file) : file_(file) {}

  std::vector<std::string> run() {
    for (int i = 0; i < file_->message_type_count(); ++i) {
      keyword("message", file_->message_type(i)->full_name(), file_->message_type(i)->name());
    }
    for (int i = 0; i < file_->enum_type_count(); ++i) {
      keyword("enum", file_->enum_type(i)->full_name(), file_->enum_type(i)->name());
    }
    const std::vector<const gp::Descriptor*> messages = messages_in_declaration_order(file_);
    const std::vector<const gp::EnumDescriptor*> enums = enums_of(file_);
    for (const gp::Descriptor* d : messages) take(local_name(d), "message " + d->full_name());
    for (const gp::EnumDescriptor* e : enums) take(local_name(e), "enum " + e->full_name());
    for (int i = 0; i < file_->service_count(); ++i) check_service(file_->service(i));
    for (const gp::Descriptor* d : messages) check_fields(d);
    return std::move(problems_);
  }

 private:
  void problem(const std::string& element, const std::string& what) {
    problems_.push_back(absl::StrCat(file_->name(), ": ", element, ": ", what));
  }

  void keyword(const std::string& kind, const std::string& full_name, const std::string& name) {
    if (!is_keyword(name)) return;
    problem(absl::StrCat(kind, " ", full_name),
            absl::StrCat("\"", name, "\" is a C++ keyword, which cannot name the generated ",
                         kind == "rpc" ? "member functions" : "type", "; rename it"));
  }

  // A name at the plain types' and object types' namespace scope.
  void take(const std::string& name, const std::string& element) {
    auto [it, fresh] = namespace_names_.emplace(name, element);
    if (!fresh) {
      problem(element, absl::StrCat("its generated name ", name, " is also generated for ",
                                    it->second, "; rename one of them"));
    }
  }

  void check_service(const gp::ServiceDescriptor* s) {
    if (!s->options().HasExtension(iso::object)) return;
    const std::string element = "service " + s->full_name();
    keyword("service", s->full_name(), s->name());
    take(s->name(), element);
    take(s->name() + "Base", element);
    take(s->name() + "Proxy", element);
    std::map<std::string, std::string> members;  // generated member -> the rpc it is for
    const auto member = [&](const gp::MethodDescriptor* m, const std::string& name) {
      const std::string rpc = "rpc " + m->full_name();
      if (generated_members().contains(name)) {
        problem(rpc, absl::StrCat("its generated member ", name,
                                  " is also a member the "
                                  "generator adds to the object type; rename the rpc"));
        return;
      }
      auto [it, fresh] = members.emplace(name, rpc);
      if (!fresh && it->second != rpc) {
        problem(rpc, absl::StrCat("its generated member ", name, " is also generated for ",
                                  it->second, "; rename one of them"));
      }
    };
    for (int i = 0; i < s->method_count(); ++i) {
      const gp::MethodDescriptor* m = s->method(i);
      keyword("rpc", m->full_name(), m->name());
      member(m, m->name());
      member(m, m->name() + "Async");
      for (const iso::GuardAlternative& g : m->options().GetExtension(iso::operation).guard()) {
        member(m, absl::StrCat(m->name(), "_guard_", g.name()));
        member(m, absl::StrCat(m->name(), "_", g.name()));
      }
    }
  }

  void check_fields(const gp::Descriptor* d) {
    for (int i = 0; i < d->field_count(); ++i) {
      const gp::FieldDescriptor* f = d->field(i);
      auto it = namespace_names_.find(identifier(f->name()));
      if (it == namespace_names_.end()) continue;
      problem("field " + f->full_name(),
              absl::StrCat("named like ", it->second,
                           ", whose type the member would hide in the generated struct ",
                           local_name(d), "; rename the field"));
    }
  }

  const gp::FileDescriptor* file_;
  std::map<std::string, std::string> namespace_names_;  // generated name -> its element
  std::vector<std::string> problems_;
};

}  // namespace

std::vector<std::string> name_problems(const gp::FileDescriptor* file) {
  return name_checker(file).run();
}

}  // namespace iso::codegen
