// The table of runtime settings: one row per key (name, unit, help, how to read it from
// the environment and print it), so that documentation, environment overrides and
// `--print-config` cannot drift apart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "iso/options.hpp"

namespace iso::runtime {

struct config_row {
  const char* name;  // environment variable: ISO_<NAME>
  const char* unit;
  const char* range;  // the values that work, e.g. "power of two, 1024 to 1073741824"
  const char* help;
  std::string value;  // effective value, as text
};

// Copies `requested`, overrides each setting whose ISO_<NAME> variable is set, and checks
// every value against its range. InvalidArgument names the variable (or the options field
// set in code), its bad value and the range.
absl::StatusOr<options> apply_environment(const options& requested);

// Settings that only tests use, kept out of the public iso::options: they come from the
// environment alone.
struct test_settings {
  // ISO_TEST_FAULT: make this node's transport break its promise once
  // (comm/fault_injection.hpp: reorder:DEST:N or corrupt:DEST:N, optionally :MINBYTES), to
  // show that paranoid mode catches it. Empty: no fault.
  std::string fault;
  // ISO_TEST_NETNS: emulated hosts for a ucx job. Node r moves into the network namespace
  // /run/netns/<prefix><h>, h = r / nodes_per_host, and an IPC namespace of its own once it
  // has joined its PMIx launcher, so that its transport reaches other hosts' nodes only over
  // the network (tools/netns-job.sh makes the namespaces). Empty: the node stays where it
  // started.
  std::string netns_prefix;
  // ISO_TEST_NODES_PER_HOST: how many consecutive nodes share an emulated host (1 to 4096;
  // default 1).
  std::uint32_t nodes_per_host = 1;
};

// Reads the test settings from the environment. InvalidArgument names the variable, its
// value and what is wrong with it.
absl::StatusOr<test_settings> read_test_settings();

// One row per setting with its effective value (`opts`, and the test settings from the
// environment; a malformed one shows its text).
std::vector<config_row> describe(const options& opts);

}  // namespace iso::runtime
