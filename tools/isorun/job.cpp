#include "tools/isorun/job.hpp"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <initializer_list>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "iso/error.hpp"
#include "iso/launcher.hpp"
#include "iso/options.hpp"
#include "tools/isorun/guardian.hpp"
#include "tools/isorun/job_identity.hpp"
#include "tools/isorun/output_tagger.hpp"
#include "tools/isorun/oversubscription.hpp"
#include "tools/isorun/posix_io.hpp"
#include "tools/isorun/spawn.hpp"

namespace iso::isorun {
namespace {

using steady = std::chrono::steady_clock;

// Time a node gets to act on SIGTERM before it is killed.
constexpr auto kKillGrace = std::chrono::milliseconds(500);
constexpr std::size_t kReadBuffer = 16 * 1024;
// How much of a finished node's output is read in one go before supervision carries on;
// only a descendant that outlives its node can keep a pipe busy that long.
constexpr std::size_t kDrainLimit = 1 << 20;
const absl::Duration kLongestTimeout = absl::Hours(100 * 24 * 365);
// How long a node that the runtime reported as failed first gets to exit on its own after
// another node exited because of it, so that isorun names it with its own status.
constexpr auto kCulpritGrace = std::chrono::milliseconds(500);
// How long isorun waits, at the very end, for the killed leftovers of the nodes' groups
// that were handed to it as their subreaper.
constexpr auto kLeftoverWait = std::chrono::seconds(1);

enum class stop_reason { none, launch_failed, node_failed, timed_out, interrupted };

struct node_process {
  pid_t pid = -1;  // also its process group
  bool running = false;
  bool group_gone = false;  // its process group had no member left when last signalled
  int status = 0;           // its wait status, once it has exited
};

// One end of a tagged stream: the read end of a node's stdout or stderr pipe.
struct output_stream {
  int fd = -1;  // -1 once the node's end has closed and we read everything
  output_tagger tagger;
};

class job {
 public:
  explicit job(const options& opts) : opts_(opts) {}
  job(const job&) = delete;
  job& operator=(const job&) = delete;
  ~job();

  int run();

 private:
  bool prepare();
  void launch_nodes();
  bool open_pipes(std::size_t node, node_launch* launch);
  void supervise();
  int poll_timeout_ms() const;
  void read_signals();
  void reap();
  void on_node_exit(std::size_t node, int status);
  void note_end_in_segment(std::size_t node);
  void report_failure(std::size_t node, int status);
  std::optional<std::size_t> first_reported_failure();
  void stop_leftovers();
  void check_deadlines();
  void stop(stop_reason reason, int exit_status);
  void signal_running(int signo);
  // Reads what stream `index` has; false once it reached end of file (and was closed).
  bool pump(std::size_t index);
  void drain(std::size_t index);
  void close_stream(std::size_t index);
  std::string name_of(std::size_t node) const;

  const options& opts_;
  job_identity identity_;
  inherited_state inherited_;
  sigset_t handled_signals_{};
  int signal_fd_ = -1;
  // The job's segment (shm), kept after the launch to tell the nodes of a node that ended
  // without leaving the job.
  int shm_fd_ = -1;
  // The runtime's reports of the first node that failed: isorun reads one end, the nodes
  // hold the other (ISO_REPORT_FD). -1 for inproc, whose process is the only one to name.
  int report_read_fd_ = -1;
  int report_write_fd_ = -1;
  std::string reports_;  // what was read of it so far
  // A node that ended without leaving the job, which isorun marked as the job's first
  // failure in the segment: the nodes name it, and so does isorun.
  std::optional<std::size_t> ended_first_;
  guardian guardian_;
  // A node the runtime reported as failed first, still running when another node exited
  // because of it: isorun waits until kCulpritGrace for it to exit, to name it.
  std::optional<std::size_t> culprit_;
  std::optional<steady::time_point> culprit_deadline_;
  std::vector<node_process> nodes_;
  std::unordered_map<pid_t, std::size_t> node_of_pid_;
  std::size_t running_ = 0;
  std::vector<output_stream> streams_;  // 2 per node with --tag-output: stdout, stderr
  std::optional<steady::time_point> job_deadline_;
  std::optional<steady::time_point> kill_deadline_;
  stop_reason stop_reason_ = stop_reason::none;
  int exit_status_ = 0;
};

job::~job() {
  for (std::size_t i = 0; i < streams_.size(); ++i) close_stream(i);
  for (const int fd : {shm_fd_, signal_fd_, report_read_fd_, report_write_fd_}) {
    if (fd != -1) ::close(fd);
  }
}

int job::run() {
  if (!prepare()) return 1;
  launch_nodes();
  supervise();
  stop_leftovers();
  return exit_status_;
}

// Process-wide setup before any node exists: signals, identity, segment, descriptor limit.
bool job::prepare() {
  // Blocked before the first fork, so no SIGCHLD or Ctrl-C can slip past the signalfd.
  ::sigemptyset(&handled_signals_);
  for (const int signo : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) ::sigaddset(&handled_signals_, signo);
  if (::sigprocmask(SIG_BLOCK, &handled_signals_, nullptr) == -1) {
    say(absl::StrFormat("cannot block signals: %s", ::strerror(errno)));
    return false;
  }
  signal_fd_ = ::signalfd(-1, &handled_signals_, SFD_NONBLOCK | SFD_CLOEXEC);
  if (signal_fd_ == -1) {
    say(absl::StrFormat("cannot create a signalfd: %s", ::strerror(errno)));
    return false;
  }
  // A reader of our stdout that goes away must not kill isorun (and with it, the job's
  // supervision); tagged output is dropped instead.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  ::sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGPIPE, &ignore, &inherited_.sigpipe_action);
  inherited_.parent_pid = ::getpid();

  // Orphans of the nodes come to isorun rather than to init, so that at the end it can
  // reap what it killed of them.
  (void)::prctl(PR_SET_CHILD_SUBREAPER, 1);
  std::string error;
  if (!guardian_.start(&error)) {
    say(error);
    return false;
  }
  auto identity = make_job_identity(&error);
  if (!identity) {
    say(error);
    return false;
  }
  identity_ = *std::move(identity);
  if (opts_.transport == transport_kind::shm) {
    shm_fd_ = create_job_segment(identity_.id, &error);
    if (shm_fd_ == -1) {
      say(error);
      return false;
    }
    int ends[2] = {-1, -1};
    if (::pipe2(ends, O_CLOEXEC | O_NONBLOCK) == -1) {
      say(absl::StrFormat("cannot create the report pipe: %s", ::strerror(errno)));
      return false;
    }
    report_read_fd_ = ends[0];
    report_write_fd_ = ends[1];
  }

  // Tagging holds two pipe ends per node; large jobs need more than the usual soft limit.
  if (opts_.tag_output && ::getrlimit(RLIMIT_NOFILE, &inherited_.nofile) == 0) {
    const rlim_t wanted = 2 * static_cast<rlim_t>(opts_.nodes) + 64;
    if (inherited_.nofile.rlim_cur != RLIM_INFINITY && inherited_.nofile.rlim_cur < wanted) {
      rlimit raised = inherited_.nofile;
      raised.rlim_cur =
          raised.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, raised.rlim_max);
      inherited_.nofile_raised = ::setrlimit(RLIMIT_NOFILE, &raised) == 0;
    }
  }
  // A timeout beyond a century is no timeout; it would overflow the clock's arithmetic.
  if (opts_.timeout && *opts_.timeout < kLongestTimeout) {
    job_deadline_ = steady::now() + absl::ToChronoNanoseconds(*opts_.timeout);
  }
  return true;
}

void job::launch_nodes() {
  const bool inproc = opts_.transport == transport_kind::inproc;
  const int processes = inproc ? 1 : opts_.nodes;
  std::vector<std::string> base_environment = environment_without_job_variables();
  if (opts_.binding) {
    // --bind wins over an ISO_BIND isorun inherited.
    std::erase_if(base_environment,
                  [](const std::string& entry) { return entry.starts_with("ISO_BIND="); });
    base_environment.push_back("ISO_BIND=" + *opts_.binding);
  }
  const std::uint32_t cores = iso::usable_cores();
  const bool oversubscribed = static_cast<std::uint32_t>(opts_.nodes) > cores;
  if (oversubscribed) {
    (void)write_all(STDERR_FILENO,
                    oversubscription_notice(static_cast<std::uint32_t>(opts_.nodes), cores));
  }
  nodes_.resize(static_cast<std::size_t>(processes));
  node_of_pid_.reserve(nodes_.size());

  for (std::size_t node = 0; node < nodes_.size(); ++node) {
    node_launch launch;
    launch.command = &opts_.command;
    launch.base_environment = &base_environment;
    // The runtime's kLaunchVariables, as launcher_test checks.
    launch.job_environment = {
        absl::StrFormat("ISO_SIZE=%d", opts_.nodes),
        absl::StrFormat("ISO_TRANSPORT=%s", inproc ? "inproc" : "shm"),
        absl::StrFormat("ISO_JOB_ID=%s", identity_.id),
        absl::StrFormat("ISO_JOB_SECRET=%s", identity_.secret),
        absl::StrFormat("ISO_OVERSUBSCRIBED=%d", oversubscribed ? 1 : 0),
    };
    if (!inproc) {
      launch.job_environment.push_back(absl::StrFormat("ISO_RANK=%d", node));
      launch.job_environment.push_back(absl::StrFormat("ISO_SHM_FD=%d", shm_fd_));
      launch.job_environment.push_back(absl::StrFormat("ISO_REPORT_FD=%d", report_write_fd_));
      launch.shm_fd = shm_fd_;
      launch.report_fd = report_write_fd_;
    }
    if (opts_.tag_output && !open_pipes(node, &launch)) {
      stop(stop_reason::launch_failed, 1);
      break;
    }

    const pid_t pid = spawn_node(launch, inherited_);
    const int fork_error = errno;
    // The child has its copies of the write ends now; ours would hide its end of file.
    if (launch.stdout_fd != -1) ::close(launch.stdout_fd);
    if (launch.stderr_fd != -1) ::close(launch.stderr_fd);
    if (pid == -1) {
      say(absl::StrFormat("cannot start %s: %s", name_of(node), ::strerror(fork_error)));
      stop(stop_reason::launch_failed, 1);
      break;
    }
    nodes_[node] = {pid, true, false};
    node_of_pid_[pid] = node;
    guardian_.watch(pid);
    ++running_;
  }

  // Every node holds its own copy now; keeping ours would hold the pipe open after the
  // nodes are gone. The segment's stays: isorun marks in it the nodes that end too early.
  if (report_write_fd_ != -1) ::close(report_write_fd_);
  report_write_fd_ = -1;
}

bool job::open_pipes(std::size_t node, node_launch* launch) {
  std::array<int, 2> out{-1, -1};
  std::array<int, 2> err{-1, -1};
  if (::pipe2(out.data(), O_CLOEXEC) == -1 || ::pipe2(err.data(), O_CLOEXEC) == -1) {
    say(absl::StrFormat("cannot create output pipes for %s: %s", name_of(node), ::strerror(errno)));
    for (const int fd : {out[0], out[1], err[0], err[1]}) {
      if (fd != -1) ::close(fd);
    }
    return false;
  }
  // Reads never block the event loop; writes in the child stay blocking (back-pressure).
  ::fcntl(out[0], F_SETFL, O_NONBLOCK);
  ::fcntl(err[0], F_SETFL, O_NONBLOCK);
  const int id = static_cast<int>(node);
  streams_.push_back({out[0], output_tagger(id, STDOUT_FILENO)});
  streams_.push_back({err[0], output_tagger(id, STDERR_FILENO)});
  launch->stdout_fd = out[1];
  launch->stderr_fd = err[1];
  return true;
}

void job::supervise() {
  std::vector<pollfd> fds;
  std::vector<std::size_t> stream_of_fd;
  while (running_ > 0) {
    fds.clear();
    stream_of_fd.clear();
    fds.push_back({signal_fd_, POLLIN, 0});
    for (std::size_t i = 0; i < streams_.size(); ++i) {
      if (streams_[i].fd == -1) continue;
      fds.push_back({streams_[i].fd, POLLIN, 0});
      stream_of_fd.push_back(i);
    }
    const int ready = ::poll(fds.data(), fds.size(), poll_timeout_ms());
    if (ready == -1 && errno != EINTR) {
      // Without poll we cannot supervise; make sure nothing outlives us and wait blindly.
      say(absl::StrFormat("poll failed: %s; killing the job", ::strerror(errno)));
      signal_running(SIGKILL);
      while (::waitpid(-1, nullptr, 0) > 0 || errno == EINTR) {
      }
      exit_status_ = 1;
      return;
    }
    if (ready > 0) {
      for (std::size_t k = 1; k < fds.size(); ++k) {
        if (fds[k].revents != 0) pump(stream_of_fd[k - 1]);
      }
      if (fds[0].revents != 0) read_signals();
    }
    check_deadlines();
  }
  // Every node has exited, so whatever they wrote is in the pipes already.
  for (std::size_t i = 0; i < streams_.size(); ++i) drain(i);
}

int job::poll_timeout_ms() const {
  std::optional<steady::time_point> next = kill_deadline_;
  if (stop_reason_ == stop_reason::none && job_deadline_) next = job_deadline_;
  if (stop_reason_ == stop_reason::none && culprit_deadline_ &&
      (!next || *culprit_deadline_ < *next)) {
    next = culprit_deadline_;
  }
  if (!next) return -1;
  const auto left = *next - steady::now();
  if (left <= steady::duration::zero()) return 0;
  // Rounded up, so that we never wake just before the deadline and spin.
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return static_cast<int>(std::min<decltype(ms)>(ms, 60'000));
}

void job::read_signals() {
  bool child_changed = false;
  signalfd_siginfo info{};
  while (::read(signal_fd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
    const int signo = static_cast<int>(info.ssi_signo);
    if (signo == SIGCHLD) {
      child_changed = true;
    } else if (stop_reason_ == stop_reason::none) {
      say("interrupted; stopping the job");
      stop(stop_reason::interrupted, 128 + signo);
    } else {
      // Asked again while stopping: the user is not willing to wait for the grace period.
      signal_running(SIGKILL);
    }
  }
  // SIGCHLDs coalesce, so one of them stands for any number of exits.
  if (child_changed) reap();
}

void job::reap() {
  for (;;) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid == -1 && errno == EINTR) continue;
    if (pid <= 0) return;
    const auto found = node_of_pid_.find(pid);
    if (found != node_of_pid_.end()) on_node_exit(found->second, status);
  }
}

void job::on_node_exit(std::size_t node, int status) {
  nodes_[node].running = false;
  nodes_[node].status = status;
  --running_;
  // A node we stopped ourselves is not another failure.
  if (stop_reason_ != stop_reason::none) return;
  note_end_in_segment(node);
  if (culprit_) {
    // Others exit because the culprit failed; only its own end is news.
    if (node == *culprit_) report_failure(node, status);
    return;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;

  // The first node to exit is often a bystander that stopped because another node failed.
  // The runtime reports which node failed first before any other can learn of it, so the
  // report is in the pipe by now if there is one.
  const std::optional<std::size_t> first = first_reported_failure();
  if (first && *first != node) {
    if (nodes_[*first].running) {
      culprit_ = *first;
      culprit_deadline_ = steady::now() + kCulpritGrace;
      return;
    }
    // It is gone already: a node that ended before the job's end (even with status 0) and
    // that the others found missing.
    report_failure(*first, nodes_[*first].status);
    return;
  }
  report_failure(node, status);
}

// A node whose process ended without leaving the job can never answer again, whatever its
// exit status: the others must stop waiting for it. They would see its process gone only
// if they share isorun's view of processes (not from another pid namespace), and a node
// that only polls waits on nobody, so isorun marks it failed in the segment; their next
// look at the job names it. A node that left first is the normal end and stays unmarked.
void job::note_end_in_segment(std::size_t node) {
  if (shm_fd_ == -1) return;
  try {
    if (iso::launcher::note_node_ended(shm_fd_, static_cast<std::uint32_t>(node)) ==
        iso::launcher::node_end::failed_first) {
      ended_first_ = node;
    }
  } catch (const iso::error& e) {
    say(absl::StrFormat("cannot tell the other nodes that %s ended: %s", name_of(node), e.what()));
  }
}

// Names `node` as the one that failed, with how it ended, and stops the job.
void job::report_failure(std::size_t node, int status) {
  // Its last words come before our verdict on it.
  if (opts_.tag_output) {
    drain(2 * node);
    drain(2 * node + 1);
  }
  if (WIFEXITED(status)) {
    // A culprit that reported a failure and still exited 0 has failed all the same.
    const int code = WEXITSTATUS(status) == 0 ? 1 : WEXITSTATUS(status);
    say(absl::StrFormat("%s exited with status %d%s", name_of(node), WEXITSTATUS(status),
                        WEXITSTATUS(status) == 0 ? " before the job's end" : ""));
    stop(stop_reason::node_failed, code);
  } else {
    const int signo = WTERMSIG(status);
    say(absl::StrFormat("%s was killed by signal %d (%s)", name_of(node), signo,
                        ::strsignal(signo)));
    stop(stop_reason::node_failed, 128 + signo);
  }
}

// The node the runtime reported first as failed (ISO_REPORT_FD), if any report arrived, or
// the node isorun marked as the job's first failure.
std::optional<std::size_t> job::first_reported_failure() {
  // The segment names one first failure to every node; a report of another on the pipe
  // lost that race to isorun's mark.
  if (ended_first_) return ended_first_;
  if (report_read_fd_ != -1) {
    std::array<char, 256> buffer;
    for (;;) {
      const ssize_t n = ::read(report_read_fd_, buffer.data(), buffer.size());
      if (n > 0 && reports_.size() < 4096) {
        reports_.append(buffer.data(), static_cast<std::size_t>(n));
        continue;
      }
      if (n == -1 && errno == EINTR) continue;
      break;
    }
  }
  const std::size_t newline = reports_.find('\n');
  std::size_t node = 0;
  if (newline == std::string::npos || !absl::SimpleAtoi(reports_.substr(0, newline), &node) ||
      node >= nodes_.size()) {
    return std::nullopt;
  }
  return node;
}

void job::check_deadlines() {
  const auto now = steady::now();
  if (stop_reason_ == stop_reason::none && job_deadline_ && now >= *job_deadline_) {
    say(absl::StrFormat("job did not finish within %g s; stopping it",
                        absl::ToDoubleSeconds(*opts_.timeout)));
    stop(stop_reason::timed_out, 124);
  }
  if (stop_reason_ == stop_reason::none && culprit_deadline_ && now >= *culprit_deadline_) {
    say(absl::StrFormat("%s failed first and has not exited; stopping the job",
                        name_of(*culprit_)));
    stop(stop_reason::node_failed, 1);
  }
  if (kill_deadline_ && now >= *kill_deadline_) {
    kill_deadline_.reset();
    signal_running(SIGKILL);
  }
}

void job::stop(stop_reason reason, int exit_status) {
  if (stop_reason_ != stop_reason::none) return;
  stop_reason_ = reason;
  exit_status_ = exit_status;
  signal_running(SIGTERM);
  kill_deadline_ = steady::now() + kKillGrace;
}

// Signals every node's whole process group: what a node started goes with it, also after
// the node itself has exited.
void job::signal_running(int signo) {
  for (node_process& node : nodes_) {
    if (node.pid <= 0 || node.group_gone) continue;
    if (::kill(-node.pid, signo) == -1 && errno == ESRCH) {
      if (node.running) {
        ::kill(node.pid, signo);  // cannot happen (the group exists before we record it)
      } else {
        // The group is empty; a pid that is a group id is not reused while the group
        // lives, but once empty it may be, so it is never signalled again.
        node.group_gone = true;
      }
    }
  }
}

// The nodes have all exited: kill what they left behind in their groups, reap it (isorun is
// the subreaper of their orphans) and let the guardian go.
void job::stop_leftovers() {
  signal_running(SIGKILL);
  guardian_.dismiss();
  const auto deadline = steady::now() + kLeftoverWait;
  for (;;) {
    const pid_t pid = ::waitpid(-1, nullptr, WNOHANG);
    if (pid > 0) continue;
    if (pid == -1 && errno == EINTR) continue;
    if (pid == -1) return;  // ECHILD: nothing left
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - steady::now());
    if (left.count() <= 0) return;
    pollfd p{signal_fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) > 0) {
      signalfd_siginfo info{};
      while (::read(signal_fd_, &info, sizeof info) > 0) {
      }
    }
  }
}

bool job::pump(std::size_t index) {
  output_stream& stream = streams_[index];
  if (stream.fd == -1) return false;
  std::array<char, kReadBuffer> buffer;
  for (;;) {
    const ssize_t n = ::read(stream.fd, buffer.data(), buffer.size());
    if (n > 0) {
      stream.tagger.feed(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
      return true;
    }
    if (n == -1 && errno == EINTR) continue;
    if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    close_stream(index);  // end of file, or an error that will not go away
    return false;
  }
}

void job::drain(std::size_t index) {
  // pump() reads at most one buffer; stop at the first empty read or after kDrainLimit.
  for (std::size_t bytes = 0; bytes < kDrainLimit && streams_[index].fd != -1;
       bytes += kReadBuffer) {
    pollfd p{streams_[index].fd, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) break;
    if (!pump(index)) break;
  }
  if (running_ == 0) close_stream(index);
}

void job::close_stream(std::size_t index) {
  output_stream& stream = streams_[index];
  if (stream.fd == -1) return;
  ::close(stream.fd);
  stream.fd = -1;
  stream.tagger.finish();
}

std::string job::name_of(std::size_t node) const {
  if (opts_.transport == transport_kind::inproc) return "the job's process";
  return absl::StrFormat("node %d", node);
}

}  // namespace

int run_job(const options& opts) {
  job the_job(opts);
  return the_job.run();
}

}  // namespace iso::isorun
