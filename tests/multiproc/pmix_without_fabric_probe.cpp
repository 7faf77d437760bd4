// A process that a PMIx launcher started, in a build without the ucx fabric (emulated here by
// planning the job as such a build does). With several processes, each must refuse to run
// rather than become a job of one node of its own; alone, it is a job of one.
// Exits 0 when the outcome is the expected one, printing it either way.
//   mpirun -n 2 pmix-without-fabric-probe several
//   mpirun -n 1 pmix-without-fabric-probe one
#include <cstdio>
#include <string>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "iso/options.hpp"
#include "runtime/job.hpp"

namespace {

int fail(const std::string& why) {
  std::fprintf(stderr, "FAILED: %s\n", why.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view expect = argc > 1 ? argv[1] : "";
  if (expect != "several" && expect != "one") return fail("usage: probe several|one");
  const absl::StatusOr<iso::runtime::job_plan> plan =
      iso::runtime::plan_job(iso::options{}, /*have_ucx=*/false);
  if (expect == "several") {
    if (plan.ok()) {
      return fail(
          absl::StrFormat("planned a job of %u node(s) instead of refusing", plan->env.size));
    }
    const std::string message(plan.status().message());
    std::printf("refused: %s\n", message.c_str());
    if (!absl::IsFailedPrecondition(plan.status())) return fail("not FailedPrecondition");
    if (!absl::StrContains(message, "a PMIx launcher started 2 processes")) {
      return fail("the message does not say how many processes the launcher started");
    }
    if (!absl::StrContains(message, "isorun -n 2")) return fail("the message names no remedy");
    return 0;
  }
  if (!plan.ok()) return fail(std::string(plan.status().message()));
  if (plan->env.size != 1 || plan->env.rank.has_value() || plan->pmix != nullptr ||
      plan->env.pmix_without_fabric) {
    return fail("a launcher's job of one did not become a plain job of one node");
  }
  std::printf("a job of one node\n");
  return 0;
}
