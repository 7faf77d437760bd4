// main() for tests that run as a multi-process job under isorun: the process joins the
// job once (iso::run) and runs every test with that node, so tests may make collective
// calls (allocate, barrier) in the same order on every node. A failing test fails the
// node, which stops the job.
#include <gtest/gtest.h>

#include "base/check.hpp"
#include "iso/iso.hpp"
#include "tests/support/job_test.hpp"

namespace iso::test {
namespace {
iso::node* g_node = nullptr;
}
iso::node& job_node() { return *g_node; }
}  // namespace iso::test

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  iso::base::set_abort_on_internal_error(true);
  return iso::run(argc, argv, [](iso::node& node) {
    iso::test::g_node = &node;
    if (RUN_ALL_TESTS() != 0) {
      throw iso::error(iso::error_code::aborted, "a test failed on this node");
    }
  });
}
