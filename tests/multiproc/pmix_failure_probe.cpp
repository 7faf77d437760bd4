// A job under a PMIx launcher in which one node's process dies (SIGKILL) after the start:
// every other node must learn from the launcher which node it was. Prints one line per
// surviving node: "node <r> saw: <status>", and exits 0 when the status names the victim.
// With a folder, each survivor also writes that line to <folder>/node-<r> (its printed line
// may be lost when the launcher ends the job).
//   mpirun -n 3 pmix-failure-probe <victim> [<folder>]
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_format.h"
#include "runtime/bootstrap/pmix_session.hpp"

int main(int argc, char** argv) {
  const std::uint32_t victim = argc > 1 ? static_cast<std::uint32_t>(std::atoi(argv[1])) : 1;
  absl::StatusOr<std::shared_ptr<iso::runtime::pmix_session>> session =
      iso::runtime::pmix_session::open();
  if (!session.ok()) {
    std::fprintf(stderr, "cannot open the PMIx session: %s\n",
                 std::string(session.status().message()).c_str());
    return 2;
  }
  iso::runtime::pmix_session& s = **session;
  if (absl::Status f = s.fence(absl::Seconds(30)); !f.ok()) return 2;
  if (s.rank() == victim) ::raise(SIGKILL);
  // Wait in a fence the victim never joins, as a node waits in a barrier.
  const std::uint64_t fence = s.start_fence();
  const absl::Time start = absl::Now();
  absl::Status seen;
  while (absl::Now() - start < absl::Seconds(10)) {
    absl::StatusOr<bool> done = s.fence_done(fence);
    if (!done.ok()) {
      seen = done.status();
      break;
    }
  }
  const std::string line =
      absl::StrFormat("node %u saw after %s: %s", s.rank(),
                      absl::FormatDuration(absl::Now() - start), seen.ToString());
  if (argc > 2) {
    const std::string path = absl::StrFormat("%s/node-%u", argv[2], s.rank());
    if (std::FILE* report = std::fopen(path.c_str(), "w"); report != nullptr) {
      std::fprintf(report, "%s\n", line.c_str());
      std::fclose(report);
    }
  }
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
  const std::string expected = absl::StrFormat("node %u ", victim);
  return seen.message().find(expected) != absl::string_view::npos ? 0 : 1;
}
