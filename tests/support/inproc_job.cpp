#include "tests/support/inproc_job.hpp"

#include <stdlib.h>

#include <string>

namespace iso::test {

int run_inproc(int nodes, const iso::options& opts, const std::function<void(iso::node&)>& body) {
  ::setenv("ISO_SIZE", std::to_string(nodes).c_str(), 1);
  ::setenv("ISO_TRANSPORT", "inproc", 1);
  ::unsetenv("ISO_RANK");
  ::unsetenv("ISO_SHM_FD");
  return iso::run(0, nullptr, opts, body);
}

}  // namespace iso::test
