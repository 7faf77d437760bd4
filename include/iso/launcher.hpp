// What a launcher of jobs on one host (isorun, or a launcher of one's own that starts the
// nodes with ISO_SHM_FD as isorun does) tells the nodes of a job. Programs never need it.
//
//   // The launcher holds the job's segment (the descriptor it gave the nodes as ISO_SHM_FD)
//   // and has just reaped the process of node `n`:
//   switch (iso::launcher::note_node_ended(segment_fd, n)) {
//     case iso::launcher::node_end::left: break;            // the job's normal end
//     case iso::launcher::node_end::failed_first: ...;      // name node n as the culprit
//     default: break;
//   }
//
// A node whose process ends without having left the job (it called _exit, or was
// killed, before iso::run returned or iso_deinit) can never answer again. Every other node
// would otherwise learn of it only by looking at that process itself, which it cannot do
// from another pid namespace (a node started inside a container or through unshare), and
// a node that only polls waits on nobody, so no time-out would tell it either.
#pragma once

#include <cstdint>

namespace iso::launcher {

// What note_node_ended() made of a node's end.
enum class node_end {
  left,          // the node had left the job first: nothing to tell, the job goes on
  not_joined,    // no process had joined the job as that node (the program is no iso
                 // program, or it ended before joining): nothing to tell
  failed_first,  // the node is now the job's first failure, the one every node names
  failed_after,  // another node had failed first; the job is stopping already
};

// The process of node `node` of the job whose segment `segment_fd` holds has ended. Unless
// the node had left the job (or never joined it), marks it failed in the segment: every
// other node's next look at the job (iso::node::poll, iso_poll, any wait, barrier) fails
// with "node <node> ended before leaving the job", so a poll loop ends within one look.
// `segment_fd` stays the caller's. Never blocks; any thread.
// Throws iso::error: invalid_argument for a node outside the job; the system's error,
// named, when the segment cannot be inspected or mapped (failed_precondition for a
// segment whose header claims more than the file holds). A descriptor too small to be a job
// segment, or without its mark, counts as a node that never joined (not_joined).
[[nodiscard]] node_end note_node_ended(int segment_fd, std::uint32_t node);

}  // namespace iso::launcher
