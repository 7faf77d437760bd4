#include "iso/launcher.hpp"

#include <string>

#include "comm/shm_segment.hpp"
#include "iso/error.hpp"

namespace iso::launcher {

node_end note_node_ended(int segment_fd, std::uint32_t node) {
  using process_end = comm::shm_segment::process_end;
  const absl::StatusOr<process_end> end = comm::shm_segment::note_process_ended(segment_fd, node);
  if (!end.ok()) {
    throw error(static_cast<error_code>(end.status().code()), std::string(end.status().message()));
  }
  switch (*end) {
    case process_end::left:
      return node_end::left;
    case process_end::not_joined:
      return node_end::not_joined;
    case process_end::first_failure:
      return node_end::failed_first;
    case process_end::other_failure:
      break;
  }
  return node_end::failed_after;
}

}  // namespace iso::launcher
