// protoc-gen-iso run by protoc on .proto files with mistakes: protoc must exit non-zero and
// print the file, the element and what is wrong. Also: a correct file passes, proto3
// `optional` included.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

struct protoc_result {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

// Writes `text` as demo.proto in a fresh folder and runs protoc with the plugin on it.
protoc_result run_protoc(const std::string& text) {
  const fs::path dir =
      fs::temp_directory_path() / ("idl_errors_test." + std::to_string(::getpid()) + "." +
                                   testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::remove_all(dir);
  fs::create_directories(dir / "out");
  std::ofstream(dir / "demo.proto") << text;
  const std::string command = std::string(ISO_PROTOC) +
                              " --plugin=protoc-gen-iso=" + ISO_PROTOC_GEN_ISO +
                              " --iso_out=" + (dir / "out").string() + " -I " + ISO_IDL_IMPORT_DIR +
                              " -I " + dir.string() + " " + (dir / "demo.proto").string() + " 2>&1";
  protoc_result r;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    r.output.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  fs::remove_all(dir);
  return r;
}

const char* const header = R"(
syntax = "proto3";
package demo;
import "iso/options.proto";
message Counter { int64 value = 1; Inner inner = 2; }
message Inner { int32 depth = 1; }
message Delta { int64 by = 1; }
message Empty {}
)";

std::string with_header(const std::string& body) { return header + body; }

TEST(IdlErrors, CorrectFileWithOptionalFieldsGenerates) {
  protoc_result r = run_protoc(with_header(R"(
message Maybe { optional int32 x = 1; optional string s = 2; }
service CounterObject {
  option (iso.object) = { state: "demo.Counter" placement: PLACEMENT_SINGLE };
  rpc Add(Delta) returns (Empty) {
    option (iso.operation) = { kind: OPERATION_WRITE
                               guard: { name: "small" reads: "state.inner.depth" reads: "arg.by"
                                        writes: "state.value" } };
  }
}
)"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(IdlErrors, OperationOptionOnAServiceThatIsNoObjectType) {
  protoc_result r = run_protoc(with_header(R"(
service Plain {
  rpc Add(Delta) returns (Empty) { option (iso.operation) = { kind: OPERATION_WRITE }; }
}
)"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("demo.proto: rpc demo.Plain.Add: option (iso.operation) on an "
                                  "rpc of service demo.Plain, which is not an object type (it "
                                  "has no option (iso.object))"));
}

TEST(IdlErrors, GuardThatNamesNoField) {
  protoc_result r = run_protoc(with_header(R"(
service CounterObject {
  option (iso.object) = { state: "Counter" };
  rpc Add(Delta) returns (Empty) {
    option (iso.operation) = { kind: OPERATION_WRITE
                               guard: { name: "g" reads: "state.count" reads: "arg.inner.x" } };
  }
}
)"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("demo.proto: rpc demo.CounterObject.Add: guard alternative "
                                  "\"g\" reads \"state.count\": names no field: demo.Counter "
                                  "has no field \"count\""));
  EXPECT_THAT(r.output, HasSubstr("reads \"arg.inner.x\": names no field: demo.Delta has no "
                                  "field \"inner\""));
}

TEST(IdlErrors, GuardPathWithoutStateOrArgPrefix) {
  protoc_result r = run_protoc(with_header(R"(
service CounterObject {
  option (iso.object) = { state: "Counter" };
  rpc Add(Delta) returns (Empty) {
    option (iso.operation) = { kind: OPERATION_WRITE guard: { name: "g" reads: "value" } };
  }
}
)"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("guard alternative \"g\" reads \"value\": a field is named "
                                  "\"state.<field>\" or \"arg.<field>\""));
}

TEST(IdlErrors, WriteMarkedRead) {
  protoc_result r = run_protoc(with_header(R"(
service CounterObject {
  option (iso.object) = { state: "Counter" };
  rpc Take(Delta) returns (Empty) {
    option (iso.operation) = { kind: OPERATION_READ
                               guard: { name: "has_some" reads: "state.value"
                                        writes: "state.value" } };
  }
}
)"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("demo.proto: rpc demo.CounterObject.Take: marked "
                                  "OPERATION_READ, but its guard alternative \"has_some\" writes "
                                  "\"state.value\" (a write marked read: make it "
                                  "OPERATION_WRITE)"));
}

TEST(IdlErrors, WritingAnArgument) {
  protoc_result r = run_protoc(with_header(R"(
service CounterObject {
  option (iso.object) = { state: "Counter" };
  rpc Add(Delta) returns (Empty) {
    option (iso.operation) = { kind: OPERATION_WRITE guard: { name: "g" writes: "arg.by" } };
  }
}
)"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("writes \"arg.by\": only fields of the state can be written"));
}

TEST(IdlErrors, StateMessageThatDoesNotExist) {
  protoc_result r = run_protoc(with_header(R"(
service CounterObject {
  option (iso.object) = { state: "Countr" };
  rpc Add(Delta) returns (Empty) { option (iso.operation) = { kind: OPERATION_WRITE }; }
}
)"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("demo.proto: service demo.CounterObject: state message "
                                  "\"Countr\" does not exist"));
}

TEST(IdlErrors, OperationWithoutKind) {
  protoc_result r = run_protoc(with_header(R"(
service CounterObject {
  option (iso.object) = { state: "Counter" };
  rpc Add(Delta) returns (Empty);
}
)"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("demo.proto: rpc demo.CounterObject.Add: the operation is "
                                  "neither read nor write"));
}

TEST(IdlErrors, NegativeHints) {
  protoc_result r = run_protoc(with_header(R"(
service CounterObject {
  option (iso.object) = { state: "Counter" read_write_ratio: -1 };
  rpc Add(Delta) returns (Empty) {
    option (iso.operation) = { kind: OPERATION_WRITE frequency: -2 };
  }
}
)"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("service demo.CounterObject: read_write_ratio must be a finite "
                                  "number, not negative (it is -1)"));
  EXPECT_THAT(r.output, HasSubstr("rpc demo.CounterObject.Add: frequency must be a finite "
                                  "number, not negative (it is -2)"));
}

TEST(IdlErrors, MapFieldIsUnsupported) {
  protoc_result r = run_protoc(with_header("message Table { map<string, int32> cells = 1; }\n"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("demo.proto: field demo.Table.cells: map fields are not "
                                  "supported; use a repeated message of key and value"));
}

TEST(IdlErrors, OneofIsUnsupported) {
  protoc_result r =
      run_protoc(with_header("message Choice { oneof pick { int32 a = 1; string b = 2; } }\n"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("demo.proto: field demo.Choice.a: oneof is not supported "
                                  "(oneof pick); use proto3 optional fields"));
}

TEST(IdlErrors, RecursiveMessageIsUnsupported) {
  protoc_result r = run_protoc(with_header("message Tree { repeated Tree children = 1; }\n"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("demo.proto: field demo.Tree.children: message demo.Tree "
                                  "contains itself through this field (recursive types are not "
                                  "supported)"));
}

TEST(IdlErrors, WellKnownTypesAreUnsupported) {
  protoc_result r = run_protoc(with_header(R"(
import "google/protobuf/empty.proto";
service CounterObject {
  option (iso.object) = { state: "Counter" };
  rpc Get(google.protobuf.Empty) returns (Counter) {
    option (iso.operation) = { kind: OPERATION_READ };
  }
}
)"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("demo.proto: rpc demo.CounterObject.Get: its type "
                                  "google.protobuf.Empty comes from google/protobuf/empty.proto"));
}

// Names the generated C++ could not use: each compiled to errors before it was checked.
TEST(IdlErrors, KeywordsAsTypeOrRpcNamesAreRefused) {
  protoc_result r = run_protoc(with_header(R"(
message class { int32 x = 1; }
service CounterObject {
  option (iso.object) = { state: "Counter" };
  rpc delete(Delta) returns (Empty) { option (iso.operation) = { kind: OPERATION_WRITE }; }
}
)"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("demo.proto: message demo.class: \"class\" is a C++ keyword, "
                                  "which cannot name the generated type; rename it"));
  EXPECT_THAT(r.output, HasSubstr("demo.proto: rpc demo.CounterObject.delete: \"delete\" is a "
                                  "C++ keyword"));
}

TEST(IdlErrors, GeneratedNamesThatCollideAreRefused) {
  protoc_result r = run_protoc(with_header(R"(
message Outer { message Inner { int32 a = 1; } Inner i = 1; }
message Outer_Inner { int64 b = 1; }
message CounterObjectProxy { int32 x = 1; }
message Named { int32 Delta = 1; }
service CounterObject {
  option (iso.object) = { state: "Counter" };
  rpc Add(Delta) returns (Empty) { option (iso.operation) = { kind: OPERATION_WRITE }; }
  rpc AddAsync(Delta) returns (Empty) { option (iso.operation) = { kind: OPERATION_WRITE }; }
  rpc state(Empty) returns (Counter) { option (iso.operation) = { kind: OPERATION_READ }; }
}
)"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("message demo.Outer_Inner: its generated name Outer_Inner is "
                                  "also generated for message demo.Outer.Inner"));
  EXPECT_THAT(r.output, HasSubstr("service demo.CounterObject: its generated name "
                                  "CounterObjectProxy is also generated for message "
                                  "demo.CounterObjectProxy"));
  EXPECT_THAT(r.output, HasSubstr("field demo.Named.Delta: named like message demo.Delta"));
  EXPECT_THAT(r.output, HasSubstr("rpc demo.CounterObject.AddAsync: its generated member "
                                  "AddAsync is also generated for rpc demo.CounterObject.Add"));
  EXPECT_THAT(r.output, HasSubstr("rpc demo.CounterObject.state: its generated member state is "
                                  "also a member the generator adds"));
}

TEST(IdlErrors, Proto2IsUnsupported) {
  protoc_result r =
      run_protoc("syntax = \"proto2\";\npackage demo;\nmessage A { optional int32 x = 1; }\n");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("demo.proto: file demo.proto: only proto3 files are supported"));
}

}  // namespace
