// A process that a PMIx launcher started, in a build without the ucx fabric (emulated here by
// reading the launch environment as such a build does). With several processes, each must
// refuse to run rather than become a job of one node of its own; alone, it is a job of one.
// Exits 0 when the outcome is the expected one, printing it either way.
//   mpirun -n 2 pmix-without-fabric-probe several
//   mpirun -n 1 pmix-without-fabric-probe one
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "runtime/bootstrap/launch_environment.hpp"
#include "runtime/bootstrap/pmix_session.hpp"

namespace {

int fail(const std::string& why) {
  std::fprintf(stderr, "FAILED: %s\n", why.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using iso::runtime::launch_environment;
  const std::string_view expect = argc > 1 ? argv[1] : "";
  if (expect != "several" && expect != "one") return fail("usage: probe several|one");
  absl::StatusOr<launch_environment> env =
      iso::runtime::read_launch_environment(/*have_ucx=*/false);
  if (!env.ok()) return fail(std::string(env.status().message()));
  if (!env->pmix_without_fabric) return fail("the PMIx launcher was not noticed");
  std::shared_ptr<iso::runtime::pmix_session> session;
  const absl::Status joined = iso::runtime::join_pmix_launcher(*env, session);
  if (expect == "several") {
    if (joined.ok()) {
      return fail(absl::StrFormat("ran as a job of %u node(s) instead of refusing", env->size));
    }
    const std::string message(joined.message());
    std::printf("refused: %s\n", message.c_str());
    if (!absl::IsFailedPrecondition(joined)) return fail("not FailedPrecondition");
    if (!absl::StrContains(message, "a PMIx launcher started 2 processes")) {
      return fail("the message does not say how many processes the launcher started");
    }
    if (!absl::StrContains(message, "isorun -n 2")) return fail("the message names no remedy");
    return 0;
  }
  if (!joined.ok()) return fail(std::string(joined.message()));
  if (env->size != 1 || env->rank.has_value() || session != nullptr || env->pmix_without_fabric) {
    return fail("a launcher's job of one did not become a plain job of one node");
  }
  std::printf("a job of one node\n");
  return 0;
}
