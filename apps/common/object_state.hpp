// What the apps' hand-built object types share (their operations take variable-length
// arguments, which the typed layer does not): a default-constructed C++ state, copied to
// clone, and argument bytes made of a fixed header and an array of values.
#pragma once

#include <cstddef>
#include <cstring>
#include <iso/iso.hpp>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace iso::apps {

// State functions for a state of type State that starts default-constructed; initial bytes
// are refused, naming the object type.
template <class State>
[[nodiscard]] iso::state_functions default_state(const std::string& type_name) {
  iso::state_functions state;
  state.create = [type_name](std::span<const std::byte> initial) -> void* {
    if (!initial.empty()) {
      throw iso::error(iso::error_code::invalid_argument, type_name + " takes no initial bytes");
    }
    return new State();
  };
  state.destroy = [](void* s) { delete static_cast<State*>(s); };
  state.clone = [](const void* s) -> void* { return new State(*static_cast<const State*>(s)); };
  return state;
}

// The bytes of a trivially copyable header, then of `values` (none: the header alone).
template <class Header, class Value = std::byte>
[[nodiscard]] std::vector<std::byte> argument_bytes(const Header& header,
                                                    std::span<const Value> values = {}) {
  static_assert(std::is_trivially_copyable_v<Header> && std::is_trivially_copyable_v<Value>);
  std::vector<std::byte> bytes(sizeof header + values.size_bytes());
  std::memcpy(bytes.data(), &header, sizeof header);
  if (!values.empty())
    std::memcpy(bytes.data() + sizeof header, values.data(), values.size_bytes());
  return bytes;
}

}  // namespace iso::apps
