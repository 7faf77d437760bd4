#include "tools/isorun/guardian.hpp"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <vector>

#include "absl/strings/str_format.h"
#include "tools/isorun/posix_io.hpp"

namespace iso::isorun {
namespace {

// Runs in the forked guardian. isorun is single-threaded, so it may allocate.
[[noreturn]] void guard(int read_fd) {
  // It holds nothing of isorun's but its end of the pipe: not the job's segment, and not
  // isorun's stdout or stderr, whose readers wait for them to close. Signals stay blocked as
  // isorun had them: an interrupt is isorun's to handle, and the guardian acts only on EOF.
  if (read_fd > 0) ::close_range(0, static_cast<unsigned>(read_fd) - 1, 0);
  ::close_range(static_cast<unsigned>(read_fd) + 1, ~0U, 0);
  std::vector<pid_t> groups;
  for (;;) {
    pid_t group = 0;
    const ssize_t n = ::read(read_fd, &group, sizeof group);
    if (n == -1 && errno == EINTR) continue;
    if (n == static_cast<ssize_t>(sizeof group)) {
      if (group == 0) _exit(0);  // dismissed
      groups.push_back(group);
      continue;
    }
    break;  // isorun has gone without dismissing us (or wrote half a pid, dying)
  }
  for (const pid_t group : groups) ::kill(-group, SIGKILL);
  _exit(0);
}

}  // namespace

guardian::~guardian() {
  if (pipe_fd_ != -1) ::close(pipe_fd_);
}

bool guardian::start(std::string* error) {
  int ends[2] = {-1, -1};
  if (::pipe2(ends, O_CLOEXEC) == -1) {
    *error = absl::StrFormat("cannot create the guardian's pipe: %s", ::strerror(errno));
    return false;
  }
  const pid_t pid = ::fork();
  if (pid == -1) {
    *error = absl::StrFormat("cannot start the guardian: %s", ::strerror(errno));
    ::close(ends[0]);
    ::close(ends[1]);
    return false;
  }
  if (pid == 0) guard(ends[0]);
  ::close(ends[0]);
  pipe_fd_ = ends[1];
  return true;
}

void guardian::watch(pid_t group) {
  // A pid is far smaller than PIPE_BUF, so the write is whole or fails; a guardian that has
  // died (EPIPE; isorun ignores SIGPIPE) leaves isorun to stop the groups alone.
  if (pipe_fd_ != -1) {
    (void)write_all(pipe_fd_,
                    std::string_view(reinterpret_cast<const char*>(&group), sizeof group));
  }
}

void guardian::dismiss() {
  watch(0);
  if (pipe_fd_ != -1) ::close(pipe_fd_);
  pipe_fd_ = -1;
}

}  // namespace iso::isorun
