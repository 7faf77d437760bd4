// What a launcher tells a node through its environment (see isorun --help):
//   ISO_RANK, ISO_SIZE, ISO_TRANSPORT (shm|inproc), ISO_JOB_ID, ISO_JOB_SECRET, ISO_SHM_FD,
//   ISO_REPORT_FD, ISO_OVERSUBSCRIBED (0|1: the job has more nodes than cores).
// A process started without a launcher is a job of one node. A process that a PMIx
// launcher started (mpirun, srun --mpi=pmix: PMIX_RANK and PMIX_NAMESPACE set, no ISO_SIZE),
// or one with ISO_TRANSPORT=ucx, is a node of a ucx job, whose rank and size PMIx tells
// (runtime/bootstrap/pmix_session.hpp); in a build without UCX, such a process may only be
// the launcher's one process.
//
// kLaunchVariables below is the one list of these names. isorun, which may use only the
// public headers, writes them out again; launcher_test checks that it sets and clears
// exactly this list, so the two cannot drift apart.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace iso::runtime {

enum class transport_kind { shm, inproc, ucx };

inline constexpr char kSizeVariable[] = "ISO_SIZE";
inline constexpr char kTransportVariable[] = "ISO_TRANSPORT";
inline constexpr char kJobIdVariable[] = "ISO_JOB_ID";
inline constexpr char kJobSecretVariable[] = "ISO_JOB_SECRET";
inline constexpr char kRankVariable[] = "ISO_RANK";
inline constexpr char kShmFdVariable[] = "ISO_SHM_FD";
inline constexpr char kReportFdVariable[] = "ISO_REPORT_FD";
inline constexpr char kOversubscribedVariable[] = "ISO_OVERSUBSCRIBED";

struct launch_variable {
  std::string_view name;
  bool shm_only;  // set for an shm job only: an inproc job's one process has no rank or fds
};

// Every variable a launcher sets, and so every one it must clear from its own environment
// before starting a job (values of an outer job must not leak into this one).
inline constexpr std::array<launch_variable, 8> kLaunchVariables = {{
    {kSizeVariable, false},
    {kTransportVariable, false},
    {kJobIdVariable, false},
    {kJobSecretVariable, false},
    {kRankVariable, true},
    {kShmFdVariable, true},
    {kReportFdVariable, true},
    {kOversubscribedVariable, false},
}};

struct launch_environment {
  transport_kind transport = transport_kind::shm;
  std::uint32_t size = 1;
  std::optional<std::uint32_t> rank;  // absent for inproc: this process hosts every node
  std::string job_id;
  std::string secret;
  std::optional<int> shm_fd;
  std::optional<int> report_fd;  // a pipe to the launcher (first failure); absent for none
  // The launcher's finding: more nodes than the cores the job may use (waiting nodes then
  // block: iso::wait_mode). Absent when no launcher said, and the runtime counts itself.
  std::optional<bool> oversubscribed;
  bool from_launcher = false;
  // ucx only: chosen because PMIx variables are set, not by ISO_TRANSPORT; where no PMIx
  // server answers after all, the process falls back to a job of one node.
  bool ucx_automatic = false;
  // A PMIx launcher started this process, but this build has no ucx fabric: a job of one
  // node is all it can be, which join_pmix_launcher checks against the launcher's size.
  bool pmix_without_fabric = false;
};

// Reads and checks the variables. InvalidArgument names the variable and its bad value
// (e.g. "ISO_RANK is 7 but ISO_SIZE is 4"). `have_ucx` says whether this build has the ucx
// fabric; the first form passes what the build has.
absl::StatusOr<launch_environment> read_launch_environment();
absl::StatusOr<launch_environment> read_launch_environment(bool have_ucx);

// Whether this build has the ucx fabric (UCX was found when it was built).
bool build_has_ucx();

class pmix_session;

// For a process a PMIx launcher started (env.transport ucx, or env.pmix_without_fabric):
// connects to the launcher and takes rank, size, secret and job name from it into `env`,
// leaving the session in `session` for the fabric. Where PMIx was chosen automatically
// and no server answers after all, `env` becomes a job of one node. In a build without
// the ucx fabric, a launcher's job of one node runs as such, and a job of several fails
// with FailedPrecondition saying how many processes the launcher started and why they
// cannot form a job: running each as a job of one would give wrong results silently.
absl::Status join_pmix_launcher(launch_environment& env, std::shared_ptr<pmix_session>& session);

// Checks that the launcher's descriptors are what they claim and makes them close-on-exec,
// so that nothing this process starts inherits them: ISO_SHM_FD must be the job's own
// shared memory object (unlinked, owner-only, "/dev/shm/iso-<ISO_JOB_ID>"), never a file
// that joining would grow and overwrite; ISO_REPORT_FD must be the write end of a pipe.
// FailedPrecondition names the variable, the descriptor and what it is instead.
absl::Status claim_launch_descriptors(const launch_environment& env);

}  // namespace iso::runtime
