// What makes one job distinct from every other on the host: its random id, its secret and
// its shared-memory segment.
#pragma once

#include <optional>
#include <string>

namespace iso::isorun {

struct job_identity {
  std::string id;      // 32 lowercase hex characters (16 random bytes)
  std::string secret;  // the same shape; never printed
};

// Draws a fresh id and secret from getrandom(2). On failure returns nullopt and sets *error.
std::optional<job_identity> make_job_identity(std::string* error);

// Creates the job's POSIX shared memory object "/iso-<id>" owner-only and exclusively, and
// unlinks the name before returning, so nothing is ever left in /dev/shm whatever crashes
// later. The descriptor is close-on-exec: children clear the flag on their own copy, so it
// reaches the nodes and nothing else. The object is left empty; node 0 sizes it. Returns the
// descriptor, or -1 with *error set.
int create_job_segment(const std::string& job_id, std::string* error);

}  // namespace iso::isorun
