// For tests linked with job_test_main: the node this process plays in the job.
#pragma once

#include "iso/iso.hpp"

namespace iso::test {
iso::node& job_node();
}
