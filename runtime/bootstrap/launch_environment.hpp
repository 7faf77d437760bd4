// What a launcher tells a node through its environment (see isorun --help):
//   ISO_RANK, ISO_SIZE, ISO_TRANSPORT (shm|inproc), ISO_JOB_ID, ISO_JOB_SECRET, ISO_SHM_FD.
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
  bool from_launcher = false;
};

// Reads and checks the variables. InvalidArgument names the variable and its bad value
// (e.g. "ISO_RANK is 7 but ISO_SIZE is 4").
absl::StatusOr<launch_environment> read_launch_environment();

}  // namespace iso::runtime
