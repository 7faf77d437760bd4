#include "compiler-support/protoc-gen-iso/generator.hpp"

#include <google/protobuf/io/zero_copy_stream.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "absl/strings/str_join.h"
#include "compiler-support/protoc-gen-iso/emit.hpp"
#include "compiler-support/protoc-gen-iso/idl_check.hpp"

namespace iso::codegen {
namespace gp = google::protobuf;

namespace {

void write(gp::compiler::GeneratorContext* context, const std::string& name,
           const std::string& text) {
  std::unique_ptr<gp::io::ZeroCopyOutputStream> stream(context->Open(name));
  void* data = nullptr;
  int size = 0;
  std::size_t done = 0;
  while (done < text.size() && stream->Next(&data, &size)) {
    std::size_t n = std::min(text.size() - done, static_cast<std::size_t>(size));
    std::memcpy(data, text.data() + done, n);
    done += n;
    if (n < static_cast<std::size_t>(size)) stream->BackUp(size - static_cast<int>(n));
  }
}

}  // namespace

bool generator::Generate(const gp::FileDescriptor* file, const std::string& parameter,
                         gp::compiler::GeneratorContext* context, std::string* error) const {
  if (!parameter.empty()) {
    *error = file->name() + ": protoc-gen-iso takes no parameters (got \"" + parameter + "\")";
    return false;
  }
  std::vector<std::string> problems = idl_problems(file);
  if (!problems.empty()) {
    *error = absl::StrJoin(problems, "\n");
    return false;
  }
  const std::string stem = file_stem(file->name());
  write(context, stem + ".iso.hpp", header_text(file));
  write(context, stem + ".iso.cpp", source_text(file));
  return true;
}

}  // namespace iso::codegen
