// marshal_demo.cpp: an argument of a generated type marshaled to a gather list, copied as a
// transport would, and unmarshaled again; then the object type's operations, and one call
// through the generated dispatch skeleton (no job needed: the runtime type is called as the
// object runtime would).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "counter.iso.hpp"

namespace {

// The user's part of the object type.
class counter final : public example::plain::CounterObjectBase {
 public:
  example::plain::Empty Add(example::plain::Counter& state,
                            const example::plain::Delta& arg) override {
    state.value += arg.by;
    return {};
  }
  example::plain::Counter Get(const example::plain::Counter& state,
                              const example::plain::Empty&) override {
    return state;
  }
};

}  // namespace

int main() {
  example::plain::Delta delta{.by = 5, .history = {1, 2, 3}};
  iso::gather_list list;
  iso::marshal(delta, list);
  std::vector<std::byte> bytes = list.flatten();

  example::plain::Delta back;
  if (absl::Status s = iso::unmarshal(bytes, back); !s.ok()) {
    std::printf("unmarshal failed: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  std::printf("round trip %s, %zu entries, %zu bytes\n", back == delta ? "equal" : "DIFFERENT",
              list.entries().size(), bytes.size());
  for (const iso::operation_descriptor& op :
       example::plain::CounterObject::descriptor().operations) {
    std::printf("operation %u %s %s\n", op.id, std::string(op.name).c_str(),
                op.kind == iso::operation_kind::read ? "read" : "write");
  }

  const iso::object_type type = example::plain::make_object_type(std::make_shared<counter>());
  void* state = type.state().create({});
  std::vector<std::byte> result;
  type.find(0)->alternatives[0].body(state, type.find(0)->unmarshal(bytes), result);
  const std::vector<std::byte> saved = type.state().save(state);
  example::plain::Counter counted;
  const bool loaded = iso::unmarshal(saved, counted).ok();
  type.state().destroy(state);
  std::printf("skeleton: %s counter %lld\n", type.name().c_str(),
              loaded ? static_cast<long long>(counted.value) : -1LL);
  return back == delta && counted.value == 5 ? 0 : 1;
}
