// marshal_demo.cpp: an argument of a generated type marshaled to a gather list, copied as a
// transport would, and unmarshaled again; then the object type's operations.
#include <cstdio>
#include <string>
#include <vector>

#include "counter.iso.hpp"

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
  return back == delta ? 0 : 1;
}
