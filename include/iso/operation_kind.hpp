// What an operation of a shared-object type may do to the object's state. Shared by the
// object runtime (iso/object.hpp) and the descriptors the IDL compiler generates
// (iso/object_type.hpp), so that a program may include both.
#pragma once

#include <cstdint>

namespace iso {

// The IDL's iso.OperationKind, with the same numbers.
enum class operation_kind : std::uint8_t {
  read = 1,   // never changes the state; runs on a local replica when there is one
  write = 2,  // may change the state; ordered with every other write to the object
};

}  // namespace iso
