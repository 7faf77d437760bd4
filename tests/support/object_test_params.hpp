// What the shared-object tests share besides their object types: the options of their
// in-process jobs, and the names of the placements a parameterised test runs under.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "iso/object.hpp"
#include "iso/options.hpp"

namespace iso::test {

// Long enough that a loaded machine never makes a job time out.
inline iso::options object_job_options() {
  iso::options o;
  o.barrier_timeout = std::chrono::seconds(60);
  return o;
}

inline std::string placement_name(const testing::TestParamInfo<iso::object_placement>& p) {
  switch (p.param) {
    case iso::object_placement::replicated:
      return "replicated";
    case iso::object_placement::single_copy:
      return "single_copy";
    case iso::object_placement::automatic:
      return "automatic";
  }
  return "unknown";
}

}  // namespace iso::test
