// What the kernel says about the process hosting another node of the job: whether it is
// still there, and whether it is stopped. A node that waits for another asks this when it
// has been idle a while, so a peer that exited without failing or was stopped does not
// leave it waiting forever (DESIGN section 7: nothing hangs).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace iso::runtime {

enum class process_state { running, stopped, gone };

struct process_sample {
  process_state state = process_state::gone;
  // When the process started (clock ticks after boot): a different value for the same pid
  // means the pid was reused by another process, and the one we knew is gone.
  std::uint64_t start_time = 0;
};

// This process's pid namespace, as an id (the namespace's inode; 0 when /proc cannot say):
// a pid means the same process to two processes only when their ids are equal and not 0.
[[nodiscard]] std::uint64_t own_pid_namespace();

// The running kernel and one of this process's namespaces, as text: "<boot id>/<kind>:[<inode>]"
// for `kind` "pid", "net" and so on; "" when /proc cannot say. Two processes with the same
// one run on one kernel in one such namespace.
[[nodiscard]] std::string kernel_and_namespace(const char* kind);

// Reads /proc/<pid>/stat. A zombie counts as gone; a process stopped by a signal or by a
// tracer counts as stopped.
[[nodiscard]] process_sample probe_process(pid_t pid);

}  // namespace iso::runtime
