#include "tools/isorun/spawn.hpp"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <array>
#include <string_view>

#include "absl/strings/str_format.h"
#include "tools/isorun/posix_io.hpp"

extern char** environ;

namespace iso::isorun {
namespace {

// The runtime's kLaunchVariables (runtime/bootstrap/launch_environment.hpp), which isorun
// may not include; launcher_test holds this list and job.cpp's to it.
constexpr std::array<std::string_view, 8> kJobVariables = {
    "ISO_RANK",       "ISO_SIZE",   "ISO_TRANSPORT", "ISO_JOB_ID",
    "ISO_JOB_SECRET", "ISO_SHM_FD", "ISO_REPORT_FD", "ISO_OVERSUBSCRIBED",
};

bool is_job_variable(std::string_view entry) {
  const std::string_view name = entry.substr(0, entry.find('='));
  for (const std::string_view variable : kJobVariables) {
    if (name == variable) return true;
  }
  return false;
}

// Runs in the child between fork and exec. isorun is single-threaded, so the child may
// allocate and format; it must only never return.
[[noreturn]] void become_node(const node_launch& launch, const inherited_state& state,
                              char* const* argv, char* const* envp) {
  // Dies with isorun. The parent may already be gone before the request took effect, in
  // which case we were reparented and must not start at all.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 || ::getppid() != state.parent_pid) _exit(127);
  // A group of its own: stopping the node signals everything it started as well. The parent
  // makes the same call, so the group exists whichever of the two runs first.
  if (::setpgid(0, 0) == -1) _exit(127);

  if (launch.stdout_fd != -1) {
    // dup2 leaves the copies on 1 and 2 inheritable; the pipe ends themselves are
    // close-on-exec, as is every other descriptor isorun holds.
    if (::dup2(launch.stdout_fd, STDOUT_FILENO) == -1) _exit(127);
    if (::dup2(launch.stderr_fd, STDERR_FILENO) == -1) _exit(127);
  }
  if (launch.shm_fd != -1 && ::fcntl(launch.shm_fd, F_SETFD, 0) == -1) _exit(127);
  if (launch.report_fd != -1 && ::fcntl(launch.report_fd, F_SETFD, 0) == -1) _exit(127);

  // isorun blocks the signals it reads through its signalfd and ignores SIGPIPE; both the
  // mask and an ignored disposition would survive exec and change the program's behaviour.
  // Other dispositions are left as isorun found them (e.g. SIGHUP ignored under nohup).
  ::sigaction(SIGPIPE, &state.sigpipe_action, nullptr);
  sigset_t empty;
  ::sigemptyset(&empty);
  ::sigprocmask(SIG_SETMASK, &empty, nullptr);
  if (state.nofile_raised) ::setrlimit(RLIMIT_NOFILE, &state.nofile);

  environ = const_cast<char**>(envp);
  ::execvp(argv[0], argv);
  const int error = errno;
  say(absl::StrFormat("cannot run '%s': %s", argv[0], ::strerror(error)));
  _exit(error == EACCES || error == ENOEXEC ? 126 : 127);
}

}  // namespace

std::vector<std::string> environment_without_job_variables() {
  std::vector<std::string> environment;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    if (!is_job_variable(*entry)) environment.emplace_back(*entry);
  }
  return environment;
}

pid_t spawn_node(const node_launch& launch, const inherited_state& state) {
  // Everything the child needs is built before fork, so the child only wires descriptors.
  std::vector<char*> argv;
  argv.reserve(launch.command->size() + 1);
  for (const std::string& word : *launch.command) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);

  std::vector<char*> envp;
  envp.reserve(launch.base_environment->size() + launch.job_environment.size() + 1);
  for (const std::string& entry : *launch.base_environment) {
    envp.push_back(const_cast<char*>(entry.c_str()));
  }
  for (const std::string& entry : launch.job_environment) {
    envp.push_back(const_cast<char*>(entry.c_str()));
  }
  envp.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid == 0) become_node(launch, state, argv.data(), envp.data());
  // EACCES once the child has exec'd (it made the group itself by then): nothing to do.
  if (pid > 0) (void)::setpgid(pid, pid);
  return pid;
}

}  // namespace iso::isorun
