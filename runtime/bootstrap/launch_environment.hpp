// What a launcher tells a node through its environment (see isorun --help):
//   ISO_RANK, ISO_SIZE, ISO_TRANSPORT (shm|inproc), ISO_JOB_ID, ISO_JOB_SECRET, ISO_SHM_FD,
//   ISO_REPORT_FD.
// A process started without a launcher is a job of one node.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace iso::runtime {

enum class transport_kind { shm, inproc };

struct launch_environment {
  transport_kind transport = transport_kind::shm;
  std::uint32_t size = 1;
  std::optional<std::uint32_t> rank;  // absent for inproc: this process hosts every node
  std::string job_id;
  std::string secret;
  std::optional<int> shm_fd;
  std::optional<int> report_fd;  // a pipe to the launcher (first failure); absent for none
  bool from_launcher = false;
};

// Reads and checks the variables. InvalidArgument names the variable and its bad value
// (e.g. "ISO_RANK is 7 but ISO_SIZE is 4").
absl::StatusOr<launch_environment> read_launch_environment();

// Checks that the launcher's descriptors are what they claim and makes them close-on-exec,
// so that nothing this process starts inherits them: ISO_SHM_FD must be the job's own
// shared memory object (unlinked, owner-only, "/dev/shm/iso-<ISO_JOB_ID>"), never a file
// that joining would grow and overwrite; ISO_REPORT_FD must be the write end of a pipe.
// FailedPrecondition names the variable, the descriptor and what it is instead.
absl::Status claim_launch_descriptors(const launch_environment& env);

}  // namespace iso::runtime
