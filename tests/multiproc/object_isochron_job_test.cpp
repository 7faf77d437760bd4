// Run by isorun as 3 processes under the isotach objects order (ISO_OBJECT_ORDER=isotach,
// set by the test's registration): two objects and a shared variable changed in one
// isochron, never seen in part by the readers on any process
// (tests/support/object_isochron_scenarios.hpp).
#include <gtest/gtest.h>

#include "tests/support/job_test.hpp"
#include "tests/support/object_isochron_scenarios.hpp"

namespace {

TEST(ObjectIsochronJob, TwoObjectsAndAVariableChangeTogetherForEveryReader) {
  iso::test::transfers_are_never_seen_in_part(iso::test::job_node(), 200);
}

}  // namespace
