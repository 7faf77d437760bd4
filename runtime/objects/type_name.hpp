// A C++ type's name as a program spells it, for error messages that name the types a call
// or an inspection gave and the ones it should have given.
#pragma once

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <typeinfo>

namespace iso::runtime {

// "std::span<int const, 18446744073709551615ul>" for typeid(std::span<const int>); the
// mangled name where it cannot be demangled.
inline std::string readable_type_name(const std::type_info& type) {
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> name(
      abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), &std::free);
  return status == 0 && name ? std::string(name.get()) : std::string(type.name());
}

}  // namespace iso::runtime
