// Helpers shared by the tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "iso/error.hpp"
#include "iso/iso.hpp"

namespace iso::test {

// Runs `action`, which must throw iso::error with `code` and a message containing
// `fragment` (each mismatch is a test failure). True when it threw an iso::error at all.
template <typename Action>
bool expect_error(iso::error_code code, const char* fragment, Action&& action) {
  try {
    action();
  } catch (const iso::error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    return true;
  }
  ADD_FAILURE() << "no error; expected " << fragment;
  return false;
}

// An isochron of one read (the commonest isochron of the tests); returns the value.
template <typename T>
T read_alone(iso::node& node, iso::shared_var<T> var) {
  iso::isochron iso(node);
  iso::value<T> v = iso.read(var);
  iso.end();
  return v.get();
}

// A test that provokes error or warning log lines on purpose calls this first; otherwise any
// such line fails the test.
void allow_log_lines_in_this_test();
bool expected_log_lines_allowed();

}  // namespace iso::test
