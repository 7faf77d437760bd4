// Object states the apps build by hand (their operations take variable-length arguments,
// which the typed layer does not): a default-constructed C++ value, copied to clone.
#pragma once

#include <cstddef>
#include <iso/iso.hpp>
#include <span>
#include <string>

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

}  // namespace iso::apps
