// Starting one node: fork, put the child in a process group of its own (so that the node's
// whole process tree can be stopped at once), prepare it so that it cannot outlive isorun
// and sees a clean signal state, then execvp the program with the node's environment.
#pragma once

#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace iso::isorun {

// What every child must undo of isorun's own process state before exec.
struct inherited_state {
  pid_t parent_pid = 0;
  struct sigaction sigpipe_action {};  // SIGPIPE as isorun found it; isorun ignores it
  rlimit nofile{};                     // the descriptor limit as isorun found it
  bool nofile_raised = false;
};

struct node_launch {
  const std::vector<std::string>* command = nullptr;  // program, then its arguments
  const std::vector<std::string>* base_environment = nullptr;
  std::vector<std::string> job_environment;  // NAME=value lines added for this node
  // Made inheritable in the child; -1 for none.
  int shm_fd = -1;
  int report_fd = -1;
  // Moved onto descriptors 1 and 2 in the child; -1 keeps isorun's own.
  int stdout_fd = -1;
  int stderr_fd = -1;
};

// isorun's environment without the variables a launcher sets, so that a job started from
// inside another job's node does not see the outer job's values where it sets none.
std::vector<std::string> environment_without_job_variables();

// Forks and execs one node as the leader of a new process group (its pgid is its pid).
// Returns the child's pid, or -1 with errno set when fork fails. Exec failures happen in the
// child, which then reports on its stderr and exits 126 when the program exists but cannot
// be executed, 127 otherwise (as shells do).
pid_t spawn_node(const node_launch& launch, const inherited_state& state);

}  // namespace iso::isorun
