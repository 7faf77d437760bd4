// One trivially copyable value as a plain message, for tests whose nodes hand each other a
// number or an object id.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <span>

#include "iso/iso.hpp"

namespace iso::test {

template <typename T>
void send_value(iso::node& node, iso::node_id to, const T& v) {
  node.send(to, std::as_bytes(std::span(&v, 1)));
}

// The next message, which must be exactly one T.
template <typename T>
T receive_value(iso::node& node) {
  const iso::message m = node.receive();
  T v{};
  EXPECT_EQ(m.bytes().size(), sizeof(T));
  std::memcpy(&v, m.bytes().data(), sizeof(T));
  return v;
}

}  // namespace iso::test
