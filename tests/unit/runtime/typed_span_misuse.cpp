// Shapes of typed object calls and operations that must not compile, one per ISO_CASE: each
// case is compiled by its own ctest (tests/unit/runtime/CMakeLists.txt), which passes when
// the compiler names the rule broken (the static assertion's message). Not part of any
// target.
#include <span>
#include <string>
#include <vector>

#include "iso/object.hpp"

namespace {

[[maybe_unused]] void misuse(iso::object& o) {
#if ISO_CASE == 1  // a span before the last argument of a call
  o.call<void>(0, std::span<const int>{}, 1);
#elif ISO_CASE == 2  // elements that are not trivially copyable
  o.call<void>(0, std::vector<std::string>{});
#elif ISO_CASE == 3  // a span as a call's result
  (void)o.call<std::span<const int> >(0);
#else
  (void)o;
#endif
}

[[maybe_unused]] void misuse_type() {
  iso::typed_object<int> t("T");
#if ISO_CASE == 4  // two spans in an operation
  t.write(0, "w", [](int&, std::span<const int>, std::span<const int>) {});
#elif ISO_CASE == 5  // a span of elements that are not trivially copyable
  t.write(0, "w", [](int&, std::span<const std::string>) {});
#elif ISO_CASE == 6  // a span the body could write through
  t.write(0, "w", [](int&, std::span<int>) {});
#endif
}

}  // namespace
