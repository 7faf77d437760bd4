// protoc-gen-iso: protoc runs it for --iso_out (see iso_generate in cmake/IsoGenerate.cmake).
#include <google/protobuf/compiler/plugin.h>

#include "compiler-support/protoc-gen-iso/generator.hpp"

int main(int argc, char* argv[]) {
  iso::codegen::generator generator;
  return google::protobuf::compiler::PluginMain(argc, argv, &generator);
}
