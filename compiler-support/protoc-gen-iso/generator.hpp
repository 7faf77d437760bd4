// protoc-gen-iso's generator: for each .proto file, foo.iso.hpp and foo.iso.cpp (see
// compiler-support/README.md), after idl_check finds nothing wrong with the file.
#pragma once

#include <google/protobuf/compiler/code_generator.h>

#include <cstdint>
#include <string>

namespace iso::codegen {

class generator final : public google::protobuf::compiler::CodeGenerator {
 public:
  bool Generate(const google::protobuf::FileDescriptor* file, const std::string& parameter,
                google::protobuf::compiler::GeneratorContext* context,
                std::string* error) const override;

  // proto3 `optional` fields become std::optional.
  [[nodiscard]] std::uint64_t GetSupportedFeatures() const override {
    return FEATURE_PROTO3_OPTIONAL;
  }
};

}  // namespace iso::codegen
