// Isotach messages a node sends to itself are flow-controlled like everyone else's: they
// wait in its receive queue until it takes them, and no more than the credit window of them
// may wait there. A node that keeps sending to itself without receiving blocks, then fails
// naming itself, instead of growing without bound.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "iso/iso.hpp"
#include "tests/support/inproc_job.hpp"
#include "tests/support/test_support.hpp"

namespace {

using iso::test::run_inproc;
using ::testing::HasSubstr;

iso::options small_window() {
  iso::options o;
  o.credit_window = 16 * 1024;
  o.barrier_timeout = std::chrono::seconds(1);  // also the credit time-out
  return o;
}

TEST(SelfMessages, NeverMoreThanTheWindowWaitInTheQueue) {
  iso::test::allow_log_lines_in_this_test();  // the node logs its failure
  std::string error;
  int sent = 0;
  const int status = run_inproc(1, small_window(), [&](iso::node& node) {
    const std::vector<std::byte> payload(1024);
    try {
      for (; sent < 1000; ++sent) {
        iso::isochron iso(node);
        iso.send(node.id(), payload);
        iso.end();
      }
    } catch (const iso::error& e) {
      error = e.what();
      throw;
    }
  });
  EXPECT_NE(status, 0);
  EXPECT_EQ(sent, 16) << "16 KiB of 1 KiB messages fit the window; the next one waits";
  EXPECT_THAT(error, HasSubstr("node 0 (itself) holds 16384 bytes of isotach messages"));
}

TEST(SelfMessages, TakingThemMakesRoomAgain) {
  int received = 0;
  const int status = run_inproc(2, small_window(), [&](iso::node& node) {
    const std::vector<std::byte> payload(1024);
    for (int i = 0; i < 1000; ++i) {
      {
        iso::isochron iso(node);
        iso.send(node.id(), payload);
      }
      if (i % 8 == 7) {
        for (int k = 0; k < 8; ++k) {
          const iso::notice n = node.iso_receive();
          if (node.id() == 0 && n.what == iso::notice::kind::message && n.source == 0) ++received;
        }
      }
    }
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(received, 1000);
}

}  // namespace
