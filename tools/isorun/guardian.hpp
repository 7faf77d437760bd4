// The guardian: a small process isorun forks before the first node, whose one job is to
// stop the nodes' process groups when isorun can no longer do it itself. When isorun dies,
// even by SIGKILL, each node dies with it (PR_SET_PDEATHSIG), but what the nodes started
// would live on, keep the job's segment and write into whatever comes next. The guardian
// learns each node's process group, notices isorun's death as the end of a pipe, and kills
// those groups. isorun dismisses it once the job is over.
#pragma once

#include <sys/types.h>

#include <string>

namespace iso::isorun {

class guardian {
 public:
  guardian() = default;
  guardian(const guardian&) = delete;
  guardian& operator=(const guardian&) = delete;
  ~guardian();

  // Forks the guardian. False with *error set when it cannot be started.
  bool start(std::string* error);

  // Adds a node's process group to those the guardian kills if isorun dies.
  void watch(pid_t group);

  // The job is over and isorun has stopped every group itself; the guardian exits quietly.
  void dismiss();

 private:
  int pipe_fd_ = -1;  // write end; the guardian holds the read end
};

}  // namespace iso::isorun
