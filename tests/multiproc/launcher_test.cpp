// Runs isorun as a subprocess with small `sh -c` node programs and checks what it promises:
// the nodes' environment, stopping a failed job quickly and completely, timeouts,
// interruption, usage errors, and that no shared memory name is ever left behind.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "nicfw/nic_thread.hpp"
#include "runtime/bootstrap/launch_environment.hpp"
#include "tests/support/one_core.hpp"

extern char** environ;

namespace {

using steady = std::chrono::steady_clock;
using namespace std::chrono_literals;

// Every wait in these tests is bounded by this; a hung isorun is killed and fails the test.
constexpr auto kHangLimit = 30s;

struct outcome {
  bool exited = false;  // false when isorun had to be killed at the hang limit
  int exit_code = -1;   // its exit status, or -1 when a signal ended it
  std::string out;
  std::string err;     // without the notice below
  std::string notice;  // isorun's line for a job with more nodes than cores, if it printed one
  steady::time_point started;
  steady::time_point ended;
  [[nodiscard]] auto elapsed() const { return ended - started; }
};

// isorun running as a child of the test, with its stdout and stderr captured.
class isorun_process {
 public:
  explicit isorun_process(const std::vector<std::string>& args,
                          const std::vector<std::string>& extra_environment = {}) {
    std::array<int, 2> out{-1, -1};
    std::array<int, 2> err{-1, -1};
    if (::pipe2(out.data(), O_CLOEXEC) != 0 || ::pipe2(err.data(), O_CLOEXEC) != 0) {
      ADD_FAILURE() << "pipe2: " << ::strerror(errno);
      return;
    }
    posix_spawn_file_actions_t actions;
    ::posix_spawn_file_actions_init(&actions);
    ::posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    ::posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    ::posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);

    std::vector<std::string> words = {ISORUN_PATH};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    argv.reserve(words.size() + 1);
    for (std::string& word : words) argv.push_back(word.data());
    argv.push_back(nullptr);
    std::vector<std::string> environment(extra_environment);
    for (char** entry = environ; *entry != nullptr; ++entry) environment.emplace_back(*entry);
    std::vector<char*> envp;
    envp.reserve(environment.size() + 1);
    for (std::string& entry : environment) envp.push_back(entry.data());
    envp.push_back(nullptr);

    result_.started = steady::now();
    const int error =
        ::posix_spawn(&pid_, ISORUN_PATH, &actions, nullptr, argv.data(), envp.data());
    ::posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    ::close(err[1]);
    out_fd_ = out[0];
    err_fd_ = err[0];
    if (error != 0) {
      ADD_FAILURE() << "posix_spawn " << ISORUN_PATH << ": " << ::strerror(error);
      pid_ = -1;
      return;
    }
    // A pidfd turns "isorun exited" into one more thing poll can wait for, with a timeout.
    pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
    if (pidfd_ == -1) ADD_FAILURE() << "pidfd_open: " << ::strerror(errno);
  }

  isorun_process(const isorun_process&) = delete;
  isorun_process& operator=(const isorun_process&) = delete;

  ~isorun_process() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    for (const int fd : {out_fd_, err_fd_, pidfd_}) {
      if (fd != -1) ::close(fd);
    }
  }

  [[nodiscard]] pid_t pid() const { return pid_; }

  // Reads isorun's stdout until it holds `count` complete lines; false at the hang limit or
  // when stdout ended first.
  bool read_stdout_lines(std::size_t count) {
    const auto deadline = steady::now() + kHangLimit;
    while (lines_in(result_.out) < count) {
      if (out_fd_ == -1 || !wait_readable(out_fd_, deadline)) return false;
      read_some(&out_fd_, &result_.out);
    }
    return true;
  }

  // Waits for isorun to exit (killing it at the hang limit) and collects all its output.
  outcome finish() {
    const auto deadline = steady::now() + kHangLimit;
    while (pid_ > 0) {
      std::vector<pollfd> fds = {{pidfd_, POLLIN, 0}};
      if (out_fd_ != -1) fds.push_back({out_fd_, POLLIN, 0});
      if (err_fd_ != -1) fds.push_back({err_fd_, POLLIN, 0});
      const int ready = ::poll(fds.data(), fds.size(), milliseconds_until(deadline));
      if (ready == 0) {
        ADD_FAILURE() << "isorun did not exit within " << kHangLimit.count() << " s; killed";
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        pid_ = -1;
        result_.ended = steady::now();
        break;
      }
      for (std::size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents == 0) continue;
        if (fds[i].fd == out_fd_) {
          read_some(&out_fd_, &result_.out);
        } else {
          read_some(&err_fd_, &result_.err);
        }
      }
      if (fds[0].revents != 0) {
        result_.ended = steady::now();
        int status = 0;
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
        result_.exited = true;
        result_.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
    }
    // isorun has gone; its output is complete unless a node outlived it and still holds a
    // pipe, which must not hang the test either.
    const auto drain_deadline = steady::now() + 5s;
    while (out_fd_ != -1 && wait_readable(out_fd_, drain_deadline)) {
      read_some(&out_fd_, &result_.out);
    }
    while (err_fd_ != -1 && wait_readable(err_fd_, drain_deadline)) {
      read_some(&err_fd_, &result_.err);
    }
    EXPECT_EQ(out_fd_, -1) << "something still holds isorun's stdout after it exited";
    EXPECT_EQ(err_fd_, -1) << "something still holds isorun's stderr after it exited";
    // Whether a job is oversubscribed depends on the machine; the tests that do not ask
    // about it must not see it.
    const std::string prefix = "isorun (oversubscribed): ";
    if (result_.err.rfind(prefix, 0) == 0) {
      const std::size_t end = result_.err.find('\n');
      const std::size_t cut = end == std::string::npos ? result_.err.size() : end + 1;
      result_.notice = result_.err.substr(0, cut);
      result_.err.erase(0, cut);
    }
    return result_;
  }

 private:
  static std::size_t lines_in(const std::string& text) {
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  }

  static int milliseconds_until(steady::time_point deadline) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - steady::now());
    return static_cast<int>(std::max<std::chrono::milliseconds::rep>(left.count(), 0));
  }

  static bool wait_readable(int fd, steady::time_point deadline) {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, milliseconds_until(deadline)) > 0;
  }

  // Appends what `*fd` has to `*text`; closes it (and sets it to -1) at end of file.
  static void read_some(int* fd, std::string* text) {
    std::array<char, 4096> buffer;
    const ssize_t n = ::read(*fd, buffer.data(), buffer.size());
    if (n > 0) {
      text->append(buffer.data(), static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      ::close(*fd);
      *fd = -1;
    }
  }

  pid_t pid_ = -1;
  int pidfd_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  outcome result_;
};

outcome run_isorun(const std::vector<std::string>& args,
                   const std::vector<std::string>& extra_environment = {}) {
  isorun_process isorun(args, extra_environment);
  return isorun.finish();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

// The pids printed one per line, each optionally after a "[i] " tag.
std::vector<pid_t> pids_in(const std::string& text) {
  std::vector<pid_t> pids;
  for (const std::string& line : lines_of(text)) {
    const std::size_t start = line.rfind(' ') == std::string::npos ? 0 : line.rfind(' ') + 1;
    pids.push_back(static_cast<pid_t>(std::stol(line.substr(start))));
  }
  return pids;
}

void expect_all_gone(const std::vector<pid_t>& pids) {
  for (const pid_t pid : pids) {
    errno = 0;
    EXPECT_EQ(::kill(pid, 0), -1) << "node process " << pid << " outlived isorun";
    EXPECT_EQ(errno, ESRCH) << "node process " << pid;
  }
}

std::set<std::string> iso_shm_entries() {
  std::set<std::string> names;
  DIR* dir = ::opendir("/dev/shm");
  if (dir == nullptr) return names;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name.rfind("iso-", 0) == 0) names.insert(name);
  }
  ::closedir(dir);
  return names;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// isorun's arguments for a job of `nodes` nodes that each run `script` with sh.
std::vector<std::string> sh_job(int nodes, const std::string& script) {
  return {"-n", std::to_string(nodes), "--", "sh", "-c", script};
}

// Node 2 of 4 fails; the others would sleep for a minute if isorun did not stop them.
const std::vector<std::string> kOneNodeExits3 =
    sh_job(4, "echo $$; if [ \"$ISO_RANK\" = 2 ]; then exit 3; fi; exec sleep 60");
// Node 1 of 3 kills itself.
const std::vector<std::string> kOneNodeKilled =
    sh_job(3, "echo $$; if [ \"$ISO_RANK\" = 1 ]; then kill -9 $$; fi; exec sleep 60");

TEST(Isorun, FailingNodeStopsTheJobWithItsStatus) {
  const outcome result = run_isorun(kOneNodeExits3);
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_LT(result.elapsed(), 2s);
  EXPECT_TRUE(contains(result.err, "node 2")) << result.err;
  EXPECT_TRUE(contains(result.err, "status 3")) << result.err;
  EXPECT_EQ(lines_of(result.err).size(), 1u) << "one failure, one line: " << result.err;
  expect_all_gone(pids_in(result.out));
}

TEST(Isorun, KilledNodeStopsTheJobAndNamesTheSignal) {
  const outcome result = run_isorun(kOneNodeKilled);
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 128 + SIGKILL);
  EXPECT_LT(result.elapsed(), 2s);
  EXPECT_TRUE(contains(result.err, "node 1")) << result.err;
  EXPECT_TRUE(contains(result.err, "signal 9")) << result.err;
  EXPECT_EQ(lines_of(result.err).size(), 1u) << "one failure, one line: " << result.err;
  expect_all_gone(pids_in(result.out));
}

TEST(Isorun, LeavesNoSharedMemoryNameBehind) {
  const std::set<std::string> before = iso_shm_entries();
  EXPECT_NE(run_isorun(kOneNodeExits3).exit_code, 0);
  EXPECT_NE(run_isorun(kOneNodeKilled).exit_code, 0);
  EXPECT_EQ(run_isorun({"-n", "2", "--", "true"}).exit_code, 0);
  EXPECT_EQ(run_isorun({"-n", "2", "--timeout", "0.2", "--", "sleep", "60"}).exit_code, 124);
  // A job started by another test at the same moment has its name for a few microseconds;
  // one left behind is in the second listing as well.
  const std::set<std::string> after = iso_shm_entries();
  const std::set<std::string> again = iso_shm_entries();
  for (const std::string& name : after) {
    EXPECT_TRUE(before.count(name) == 1 || again.count(name) == 0)
        << "/dev/shm/" << name << " was left behind";
  }
}

TEST(Isorun, NodesSeeTheirRankSizeAndSharedSegment) {
  const std::string script =
      "test -e /proc/self/fd/$ISO_SHM_FD && echo rank=$ISO_RANK size=$ISO_SIZE;"
      "echo transport=$ISO_TRANSPORT id=$ISO_JOB_ID;"
      "echo segment=$(readlink /proc/self/fd/$ISO_SHM_FD);"
      "test -e /dev/shm/iso-$ISO_JOB_ID && echo name=present || echo name=absent";
  const outcome result = run_isorun({"-n", "3", "--tag-output", "--", "sh", "-c", script});
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  for (const char* line : {"[0] rank=0 size=3", "[1] rank=1 size=3", "[2] rank=2 size=3"}) {
    EXPECT_TRUE(contains(result.out, line)) << "missing '" << line << "' in:\n" << result.out;
  }

  std::set<std::string> ids;
  for (const std::string& line : lines_of(result.out)) {
    const std::size_t at = line.find("id=");
    if (at != std::string::npos) ids.insert(line.substr(at + 3));
    // The descriptor is the job's segment, already unlinked when the node runs.
    if (contains(line, "segment=")) {
      EXPECT_TRUE(contains(line, "(deleted)")) << line;
    }
    if (contains(line, "name=")) {
      EXPECT_TRUE(contains(line, "name=absent")) << line;
    }
    if (contains(line, "transport=")) {
      EXPECT_TRUE(contains(line, "transport=shm ")) << line;
    }
  }
  ASSERT_EQ(ids.size(), 1u) << "nodes disagree on ISO_JOB_ID:\n" << result.out;
  const std::string id = *ids.begin();
  EXPECT_EQ(id.size(), 32u) << id;
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
  EXPECT_TRUE(contains(result.out, "segment=/dev/shm/iso-" + id)) << result.out;
}

TEST(Isorun, NeverPrintsTheJobSecret) {
  // A job that prints nothing gets nothing printed by isorun either.
  const outcome quiet = run_isorun({"-n", "3", "--tag-output", "--", "true"});
  ASSERT_TRUE(quiet.exited);
  EXPECT_EQ(quiet.exit_code, 0);
  EXPECT_EQ(quiet.out, "");
  EXPECT_EQ(quiet.err, "");

  // Nor when it reports a failure: the secret, which the failing node hands over through a
  // file before it exits, appears nowhere in isorun's output.
  char dir_template[] = "/tmp/launcher_test.XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string secret_file = std::string(dir_template) + "/secret";
  const outcome failed =
      run_isorun(sh_job(2, "if [ $ISO_RANK = 1 ]; then printf %s \"$ISO_JOB_SECRET\" > " +
                               secret_file + "; exit 1; fi; exec sleep 60"));
  EXPECT_EQ(failed.exit_code, 1);
  std::string secret;
  if (FILE* file = std::fopen(secret_file.c_str(), "r")) {
    std::array<char, 128> buffer{};
    secret.assign(buffer.data(), std::fread(buffer.data(), 1, buffer.size(), file));
    std::fclose(file);
  }
  ::unlink(secret_file.c_str());
  ::rmdir(dir_template);
  ASSERT_EQ(secret.size(), 32u) << "ISO_JOB_SECRET was '" << secret << "'";
  EXPECT_EQ(secret.find_first_not_of("0123456789abcdef"), std::string::npos) << secret;
  EXPECT_FALSE(contains(failed.out, secret));
  EXPECT_FALSE(contains(failed.err, secret));
  EXPECT_TRUE(contains(failed.err, "node 1 exited with status 1")) << failed.err;
}

TEST(Isorun, RejectsBadArgumentsWithStatus2) {
  struct bad_case {
    std::vector<std::string> args;
    std::string named;  // what the error line must mention
  };
  const std::vector<bad_case> cases = {
      {{}, "-n"},
      {{"-n", "0", "--", "true"}, "'0'"},
      {{"-n", "abc", "--", "true"}, "'abc'"},
      {{"-n", "4097", "--", "true"}, "'4097'"},
      {{"-n", "2x", "--", "true"}, "'2x'"},
      {{"-n", "2", "--transport", "carrier-pigeon", "--", "true"}, "'carrier-pigeon'"},
      {{"-n", "2"}, "no program"},
      {{"-n", "2", "--"}, "no program"},
      {{"-n", "2", "--timeout", "0", "--", "true"}, "'0'"},
      {{"-n", "2", "--timeout", "soon", "--", "true"}, "'soon'"},
      {{"-n", "2", "--frobnicate", "--", "true"}, "'--frobnicate'"},
      {{"-n"}, "'-n'"},
  };
  for (const bad_case& bad : cases) {
    std::string joined;
    for (const std::string& arg : bad.args) joined += " " + arg;
    const outcome result = run_isorun(bad.args);
    ASSERT_TRUE(result.exited) << "isorun" << joined;
    EXPECT_EQ(result.exit_code, 2) << "isorun" << joined;
    EXPECT_EQ(result.out, "") << "isorun" << joined;
    const std::vector<std::string> lines = lines_of(result.err);
    ASSERT_FALSE(lines.empty()) << "isorun" << joined;
    EXPECT_EQ(lines[0].rfind("isorun: ", 0), 0u) << lines[0];
    EXPECT_TRUE(contains(lines[0], bad.named)) << "isorun" << joined << ": " << lines[0];
    EXPECT_TRUE(contains(result.err, "usage: isorun")) << "isorun" << joined;
  }
}

TEST(Isorun, HelpPrintsUsageAndSucceeds) {
  for (const char* flag : {"--help", "-h"}) {
    const outcome result = run_isorun({flag});
    ASSERT_TRUE(result.exited);
    EXPECT_EQ(result.exit_code, 0) << flag;
    EXPECT_EQ(result.err, "") << flag;
    for (const char* documented : {"usage: isorun", "ISO_RANK", "ISO_SIZE", "ISO_TRANSPORT",
                                   "ISO_JOB_ID", "ISO_SHM_FD", "ISO_JOB_SECRET", "ISO_REPORT_FD",
                                   "ISO_OVERSUBSCRIBED", "127      the program was not found",
                                   "126      the program was found but could not be executed",
                                   "124      the job ran past --timeout"}) {
      EXPECT_TRUE(contains(result.out, documented)) << flag << " does not mention " << documented;
    }
  }
}

TEST(Isorun, LeavesTheProgramsArgumentsAlone) {
  for (const bool with_separator : {true, false}) {
    std::vector<std::string> args = {"-n", "1"};
    if (with_separator) args.push_back("--");
    for (const char* word : {"sh", "-c", "printf '%s|' \"$@\"", "sh", "-n", "5", "--help", "--"}) {
      args.emplace_back(word);
    }
    const outcome result = run_isorun(args);
    ASSERT_TRUE(result.exited);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out, "-n|5|--help|--|");
  }
}

TEST(Isorun, TimeoutStopsTheJobWith124) {
  const outcome result =
      run_isorun({"--timeout", "1", "-n", "2", "--", "sh", "-c", "exec sleep 60"});
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 124);
  EXPECT_LT(result.elapsed(), 3s);
  EXPECT_TRUE(contains(result.err, "did not finish within 1 s")) << result.err;
}

TEST(Isorun, InterruptStopsEveryNode) {
  isorun_process isorun({"-n", "3", "--tag-output", "--", "sh", "-c", "echo $$; exec sleep 60"});
  ASSERT_TRUE(isorun.read_stdout_lines(3)) << "the nodes did not all start";
  const auto interrupted_at = steady::now();
  ASSERT_EQ(::kill(isorun.pid(), SIGINT), 0);
  const outcome result = isorun.finish();
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 128 + SIGINT);
  EXPECT_LT(result.ended - interrupted_at, 2s);
  EXPECT_TRUE(contains(result.err, "interrupted")) << result.err;
  const std::vector<pid_t> pids = pids_in(result.out);
  EXPECT_EQ(pids.size(), 3u) << result.out;
  expect_all_gone(pids);
}

TEST(Isorun, NodesIgnoringSigtermAreKilledAfterTheGracePeriod) {
  isorun_process isorun(
      {"-n", "2", "--tag-output", "--", "sh", "-c", "trap '' TERM; echo $$; exec sleep 60"});
  ASSERT_TRUE(isorun.read_stdout_lines(2)) << "the nodes did not all start";
  const auto interrupted_at = steady::now();
  ASSERT_EQ(::kill(isorun.pid(), SIGTERM), 0);
  const outcome result = isorun.finish();
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 128 + SIGTERM);
  // SIGTERM first, which these nodes ignore; SIGKILL 500 ms later.
  EXPECT_GE(result.ended - interrupted_at, 400ms);
  EXPECT_LT(result.ended - interrupted_at, 2s);
  expect_all_gone(pids_in(result.out));
}

TEST(Isorun, InprocStartsOneProcessWithoutRank) {
  // Values of an outer job must not leak into this one.
  const std::string script =
      "echo size=$ISO_SIZE transport=$ISO_TRANSPORT rank=${ISO_RANK-unset}"
      " fd=${ISO_SHM_FD-unset} id=${#ISO_JOB_ID} secret=${#ISO_JOB_SECRET}";
  const outcome result =
      run_isorun({"-n", "4", "--transport", "inproc", "--tag-output", "--", "sh", "-c", script},
                 {"ISO_RANK=7", "ISO_SHM_FD=9"});
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "[0] size=4 transport=inproc rank=unset fd=unset id=32 secret=32\n");
  EXPECT_EQ(result.err, "");
}

// isorun writes the launch variables' names itself (it may use only the public headers);
// this holds them to the runtime's one list: for each transport, a node sees exactly the
// variables the runtime reads for it, and none keeps a value from isorun's own environment.
TEST(Isorun, SetsAndClearsExactlyTheRuntimesLaunchVariables) {
  const std::string stale = "value-of-an-outer-job";
  std::vector<std::string> outer;
  outer.reserve(iso::runtime::kLaunchVariables.size());
  for (const auto& variable : iso::runtime::kLaunchVariables) {
    outer.push_back(std::string(variable.name) + "=" + stale);
  }
  for (const bool shm : {true, false}) {
    SCOPED_TRACE(shm ? "shm" : "inproc");
    const outcome result = run_isorun({"-n", "2", "--transport", shm ? "shm" : "inproc", "--", "sh",
                                       "-c", "if [ \"${ISO_RANK-0}\" = 0 ]; then env; fi"},
                                      outer);
    ASSERT_TRUE(result.exited);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    std::set<std::string> seen;
    for (const std::string& line : lines_of(result.out)) {
      const std::size_t equals = line.find('=');
      if (line.rfind("ISO_", 0) != 0 || equals == std::string::npos) continue;
      const std::string name = line.substr(0, equals);
      EXPECT_NE(line.substr(equals + 1), stale) << name << " kept isorun's own value";
      seen.insert(name);
    }
    std::set<std::string> expected;
    for (const auto& variable : iso::runtime::kLaunchVariables) {
      if (shm || !variable.shm_only) expected.insert(std::string(variable.name));
    }
    // Settings such as ISO_DEBUG pass through from the test's own environment.
    std::set<std::string> launch_names;
    for (const std::string& name : seen) {
      if (expected.count(name) != 0 || ::getenv(name.c_str()) == nullptr) {
        launch_names.insert(name);
      }
    }
    EXPECT_EQ(launch_names, expected);
  }
}

using iso::test::one_core;

// isorun counts the cores it may use (its affinity, which taskset narrows), says in one line
// when the job has more nodes than that, and tells every node either way.
TEST(Isorun, SaysWhenTheJobHasMoreNodesThanCores) {
  const std::string script = "if [ \"${ISO_RANK-0}\" = 0 ]; then echo over=$ISO_OVERSUBSCRIBED; fi";
  {
    const one_core core;
    ASSERT_TRUE(core.pinned());
    for (const char* transport : {"shm", "inproc"}) {
      const outcome over =
          run_isorun({"-n", "2", "--transport", transport, "--", "sh", "-c", script});
      ASSERT_TRUE(over.exited);
      EXPECT_EQ(over.exit_code, 0) << over.err;
      EXPECT_EQ(over.out, "over=1\n") << transport;
      EXPECT_TRUE(contains(over.notice, "2 nodes on 1 core;")) << transport << ": " << over.notice;
      EXPECT_EQ(std::count(over.notice.begin(), over.notice.end(), '\n'), 1) << over.notice;
      EXPECT_EQ(over.err, "") << transport;
    }
    const outcome fits = run_isorun({"-n", "1", "--", "sh", "-c", script});
    EXPECT_EQ(fits.out, "over=0\n");
    EXPECT_EQ(fits.notice, "");
  }
}

// What fabric-status-probe says of each node: its binding, the processors its thread may
// use, and those it may use once the job is over, by node id.
struct node_place {
  std::string binding;
  std::set<int> cpus;
  std::set<int> after;
};

std::set<int> cpu_list(const std::string& text) {
  std::set<int> cpus;
  std::istringstream list(text);
  for (std::string cpu; std::getline(list, cpu, ',');) cpus.insert(std::stoi(cpu));
  return cpus;
}

// From the output of a job run with --tag-output.
std::vector<node_place> places_in(const std::string& out, int nodes) {
  std::vector<node_place> places(static_cast<std::size_t>(nodes));
  for (const std::string& line : lines_of(out)) {
    const std::size_t tag_end = line.find("] ");
    if (line.rfind('[', 0) != 0 || tag_end == std::string::npos) {
      ADD_FAILURE() << "an untagged line: " << line;
      continue;
    }
    const auto id = static_cast<std::size_t>(std::stoul(line.substr(1)));
    const std::string text = line.substr(tag_end + 2);
    if (id >= places.size()) continue;
    if (text.rfind("after the job: cpus ", 0) == 0) {
      places[id].after = cpu_list(text.substr(20));
      continue;
    }
    const std::size_t binding = text.find(", binding ");
    const std::size_t cpus = text.rfind(", cpus ");
    const std::size_t waiting = text.rfind(", waiting ");
    if (binding == std::string::npos || cpus == std::string::npos || waiting == std::string::npos ||
        waiting < cpus) {
      ADD_FAILURE() << "not a status line: " << line;
      continue;
    }
    places[id].binding = text.substr(binding + 10, cpus - binding - 10);
    places[id].cpus = cpu_list(text.substr(cpus + 7, waiting - cpus - 7));
  }
  return places;
}

std::set<int> own_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::set<int> cpus;
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.insert(cpu);
  }
  return cpus;
}

// isorun's arguments for the status probe on `nodes` nodes, after `options`.
std::vector<std::string> probe_job(int nodes, std::vector<std::string> options = {}) {
  std::vector<std::string> args = {"-n", std::to_string(nodes), "--tag-output"};
  args.insert(args.end(), options.begin(), options.end());
  args.insert(args.end(), {"--", STATUS_PROBE_PATH});
  return args;
}

// Inline NICs, whatever the machine, so that only the nodes need cores.
const std::vector<std::string> kInlineNics = {"ISO_NIC=inline"};

// Two nodes that share a core take turns, one polling for what the other, descheduled,
// cannot answer: bound, isorun's nodes each run on a core of their own, and get back the
// processors they had once the job is over (a thread started after it is not squeezed).
TEST(Isorun, BindsEachNodeToACoreOfItsOwn) {
  const std::uint32_t cores = iso::nicfw::allowed_cores();
  if (cores < 2) GTEST_SKIP() << "this test needs two cores";
  const std::set<int> mine = own_cpus();
  const outcome bound = run_isorun(probe_job(2, {"--bind", "core"}), kInlineNics);
  ASSERT_EQ(bound.exit_code, 0) << bound.err;
  const std::vector<node_place> places = places_in(bound.out, 2);
  for (std::size_t id = 0; id < places.size(); ++id) {
    EXPECT_TRUE(places[id].binding.starts_with("core " + std::to_string(id) + " (cpus "))
        << places[id].binding;
    EXPECT_FALSE(places[id].cpus.empty()) << id;
    EXPECT_LT(places[id].cpus.size(), mine.size()) << id;
    for (const int cpu : places[id].cpus) EXPECT_EQ(mine.count(cpu), 1u) << cpu;
    EXPECT_EQ(places[id].after, mine) << id;
  }
  for (const int cpu : places[0].cpus) EXPECT_EQ(places[1].cpus.count(cpu), 0u) << cpu;

  const outcome unbound = run_isorun(probe_job(2, {"--bind", "none"}), kInlineNics);
  ASSERT_EQ(unbound.exit_code, 0) << unbound.err;
  for (const node_place& place : places_in(unbound.out, 2)) {
    EXPECT_EQ(place.binding, "unbound");
    EXPECT_EQ(place.cpus, mine);
  }

  // Automatic: bound where the job's two nodes take more than half of the cores.
  std::vector<std::string> automatic = kInlineNics;
  automatic.emplace_back("ISO_BIND=auto");
  const outcome chosen = run_isorun(probe_job(2), automatic);
  ASSERT_EQ(chosen.exit_code, 0) << chosen.err;
  for (const node_place& place : places_in(chosen.out, 2)) {
    EXPECT_EQ(place.binding.starts_with("core "), cores < 4) << place.binding;
  }
}

// With more nodes than cores nothing is bound; asked for, the nodes say why not.
TEST(Isorun, SaysWhyANodeIsNotBound) {
  const one_core core;
  ASSERT_TRUE(core.pinned());
  std::vector<std::string> automatic = kInlineNics;
  automatic.emplace_back("ISO_BIND=auto");
  const outcome quiet = run_isorun(probe_job(2), automatic);
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  for (const node_place& place : places_in(quiet.out, 2)) EXPECT_EQ(place.binding, "unbound");
  const outcome asked = run_isorun(probe_job(2, {"--bind", "core"}), kInlineNics);
  ASSERT_EQ(asked.exit_code, 0) << asked.err;
  for (const node_place& place : places_in(asked.out, 2)) {
    EXPECT_EQ(place.binding, "unbound: 2 nodes on this host, and this process may use 1 core");
  }
  EXPECT_TRUE(contains(asked.err, "not binding to a core")) << asked.err;
  const outcome bad = run_isorun(probe_job(2, {"--bind", "socket"}));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(contains(bad.err, "--bind takes 'auto', 'core' or 'none', not 'socket'")) << bad.err;
}

TEST(Isorun, TagOutputPrefixesWholeLines) {
  const outcome result =
      run_isorun({"-n", "2", "--tag-output", "--", "sh", "-c",
                  "if [ $ISO_RANK = 1 ]; then printf 'one\\npartial'; echo oops >&2; fi"});
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "[1] one\n[1] partial\n");
  EXPECT_EQ(result.err, "[1] oops\n");
}

TEST(Isorun, MissingProgramCannotRun) {
  const outcome result = run_isorun({"-n", "2", "--", "/nonexistent/launcher-test-program"});
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 127);  // as --help says, and as shells do
  EXPECT_TRUE(contains(result.err, "cannot run '/nonexistent/launcher-test-program'"))
      << result.err;
  // Something that is there but cannot be executed (a directory): 126.
  const outcome not_executable = run_isorun({"-n", "1", "--", "/"});
  ASSERT_TRUE(not_executable.exited);
  EXPECT_EQ(not_executable.exit_code, 126) << not_executable.err;
  EXPECT_TRUE(contains(not_executable.err, "cannot run '/'")) << not_executable.err;
}

}  // namespace

namespace {

// --print-config shows every setting with its effective value, environment overrides
// included, and a malformed override as an error rather than a crash.
TEST(Isorun, PrintConfigShowsEffectiveSettings) {
  const outcome plain = run_isorun({"--print-config"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(plain.out.find("ISO_RING_CAPACITY"), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find("ISO_NIC"), std::string::npos) << plain.out;
  const outcome overridden = run_isorun({"--print-config"}, {"ISO_RING_CAPACITY=1048576"});
  ASSERT_EQ(overridden.exit_code, 0);
  EXPECT_NE(overridden.out.find("1048576"), std::string::npos) << overridden.out;
  const outcome bad = run_isorun({"--print-config"}, {"ISO_NIC=carrier-pigeon"});
  ASSERT_EQ(bad.exit_code, 0);
  EXPECT_NE(bad.out.find("carrier-pigeon"), std::string::npos) << bad.out;
  // Same-host reads and their memory windows.
  EXPECT_NE(plain.out.find("ISO_DIRECT_READS"), std::string::npos) << plain.out;
  const outcome huge = run_isorun({"--print-config"}, {"ISO_WINDOW_BYTES=1099511627776"});
  ASSERT_EQ(huge.exit_code, 0);
  EXPECT_NE(huge.out.find("ISO_WINDOW_BYTES is '1099511627776'; valid values: 0 to 68719476736"),
            std::string::npos)
      << huge.out;
}

}  // namespace

namespace {

// Waits until every process of `pids` has ended (not necessarily been reaped: after isorun
// dies its orphans belong to someone else); false if one is still running after `limit`.
bool all_end_within(const std::vector<pid_t>& pids, std::chrono::milliseconds limit) {
  const auto deadline = steady::now() + limit;
  for (const pid_t pid : pids) {
    const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (fd == -1) continue;  // already gone and reaped
    pollfd p{fd, POLLIN, 0};
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - steady::now());
    const int ready = ::poll(&p, 1, static_cast<int>(std::max<long>(left.count(), 0)));
    ::close(fd);
    if (ready <= 0) return false;
  }
  return true;
}

// What a node started (here a `sleep` in the background of the node's shell) is stopped
// with the job, and does not hold isorun's output open after it (finish() checks that).
TEST(Isorun, StoppingAJobStopsWhatItsNodesStarted) {
  // Node 1 fails once node 0 has printed its sleep's pid (and made a file to say so).
  char dir_template[] = "/tmp/launcher_test.XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string ready = std::string(dir_template) + "/ready";
  const outcome result =
      run_isorun({"-n", "2", "--tag-output", "--", "sh", "-c",
                  "sleep 60 & echo $!; if [ $ISO_RANK = 1 ]; then while [ ! -e " + ready +
                      " ]; do :; done; exit 3; fi; touch " + ready + "; wait"});
  ::unlink(ready.c_str());
  ::rmdir(dir_template);
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 3) << result.err;
  const std::vector<pid_t> pids = pids_in(result.out);
  EXPECT_EQ(pids.size(), 2u) << result.out;
  expect_all_gone(pids);
}

// The same when the job ends well but a node leaves something running behind it.
TEST(Isorun, NothingANodeStartedOutlivesTheJob) {
  const outcome result =
      run_isorun({"-n", "1", "--", "sh", "-c", "sleep 60 > /dev/null 2>&1 & echo $!"});
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  const std::vector<pid_t> pids = pids_in(result.out);
  EXPECT_EQ(pids.size(), 1u) << result.out;
  EXPECT_TRUE(all_end_within(pids, 5s)) << result.out;
}

// isorun killed with SIGKILL cannot stop anything itself; what the nodes started must still
// go (the nodes themselves die with isorun).
TEST(Isorun, KillingIsorunStopsWhatItsNodesStarted) {
  isorun_process isorun({"-n", "2", "--tag-output", "--", "sh", "-c", "sleep 60 & echo $!; wait"});
  ASSERT_TRUE(isorun.read_stdout_lines(2)) << "the nodes did not all start";
  ASSERT_EQ(::kill(isorun.pid(), SIGKILL), 0);
  const outcome result = isorun.finish();
  EXPECT_FALSE(result.exited && result.exit_code == 0);
  EXPECT_TRUE(all_end_within(pids_in(result.out), 10s)) << result.out;
}

TEST(Isorun, NamesTheNodeThatFailedFirstNotTheFirstToExit) {
  // Node 2 throws; nodes 0 and 1 stop because of it and exit before node 2 does.
  const outcome result = run_isorun({"-n", "3", "--", PROBE_PATH, "fail", "2"});
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  std::vector<std::string> verdicts;
  for (const std::string& line : lines_of(result.err)) {
    if (line.rfind("isorun: ", 0) == 0) verdicts.push_back(line);
  }
  ASSERT_EQ(verdicts.size(), 1u) << result.err;
  EXPECT_TRUE(contains(verdicts[0], "node 2 ")) << result.err;
}

// Two iso programs one after the other in one node: the second cannot join the job again
// (it would re-initialise or share a node's rings) and says why, and nothing hangs.
TEST(Isorun, ARankIsJoinedOnce) {
  const std::string probe = PROBE_PATH;
  const outcome result =
      run_isorun({"-n", "2", "--", "sh", "-c", probe + " ok && " + probe + " ok"});
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_TRUE(contains(result.err, "has already been joined by another process")) << result.err;
  EXPECT_FALSE(contains(result.err, "holds")) << result.err;
}

// What an iso program starts does not inherit the job's segment.
TEST(Isorun, TheSegmentIsNotInheritedByANodesChildren) {
  const outcome result = run_isorun({"-n", "2", "--", PROBE_PATH, "child"});
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(contains(result.out, "child: closed")) << result.out;
  EXPECT_FALSE(contains(result.out, "child: inherited")) << result.out;
}

// iso::run a second time in a node's process: a clear error, not a broken descriptor.
TEST(Isorun, SecondRunInAProcessIsRefusedClearly) {
  const outcome result = run_isorun({"-n", "2", "--", PROBE_PATH, "twice"});
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_TRUE(contains(result.err, "already joined its job as node")) << result.err;
  EXPECT_FALSE(contains(result.err, "Bad file descriptor")) << result.err;
}

// ISO_SHM_FD naming an ordinary file is refused; the file is left as it was.
TEST(Isorun, ASegmentDescriptorThatIsAFileIsRefused) {
  char dir_template[] = "/tmp/launcher_test.XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string file = std::string(dir_template) + "/precious";
  const outcome result = run_isorun(
      {"-n", "1", "--", "sh", "-c",
       "echo precious > " + file + "; exec 7<>" + file + "; ISO_SHM_FD=7 exec " PROBE_PATH " ok"});
  struct stat st {};
  const bool present = ::stat(file.c_str(), &st) == 0;
  ::unlink(file.c_str());
  ::rmdir(dir_template);
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_TRUE(contains(result.err, "ISO_SHM_FD is 7, which is '" + file + "'")) << result.err;
  ASSERT_TRUE(present);
  EXPECT_EQ(st.st_size, 9) << "the file was changed";
}

}  // namespace

namespace {

// Every setting is checked against what works, and the error names the variable, the bad
// value and the valid range; nothing out of range reaches the job (a 256-byte ring used to
// pass and then fail on the first large packet).
TEST(Isorun, SettingsOutsideTheirRangeAreRefusedWithTheRange) {
  struct bad_setting {
    std::string assignment;
    std::string message;
  };
  const std::vector<bad_setting> cases = {
      {"ISO_RING_CAPACITY=256",
       "ISO_RING_CAPACITY is '256'; valid values: power of two, 1024 to 1073741824"},
      {"ISO_RING_CAPACITY=3000", "ISO_RING_CAPACITY is '3000'; valid values: power of two"},
      {"ISO_JOIN_TIMEOUT_MS=99999999999999999",
       "ISO_JOIN_TIMEOUT_MS is '99999999999999999'; valid values: 1 to 604800000"},
      {"ISO_BARRIER_TIMEOUT_MS=0", "ISO_BARRIER_TIMEOUT_MS is '0'; valid values: 1 to 604800000"},
      {"ISO_CREDIT_WINDOW=100", "ISO_CREDIT_WINDOW is '100'; valid values: 4096 to 1073741824"},
      {"ISO_PAGE_VARIABLES=3", "ISO_PAGE_VARIABLES is '3'; valid values: power of two, 1 to"},
      {"ISO_NIC_SPIN_US=5000000", "ISO_NIC_SPIN_US is '5000000'; valid values: 0 to 1000000"},
      {"ISO_WINDOW_BYTES=x", "ISO_WINDOW_BYTES is 'x', not a number of bytes"},
  };
  for (const bad_setting& bad : cases) {
    const outcome result = run_isorun({"-n", "2", "--", PROBE_PATH, "ok"}, {bad.assignment});
    ASSERT_TRUE(result.exited) << bad.assignment;
    EXPECT_EQ(result.exit_code, 1) << bad.assignment << ": " << result.err;
    EXPECT_TRUE(contains(result.err, bad.message)) << bad.assignment << ": " << result.err;
  }
}

// The table shows each setting's valid values, and ISO_PAGE_VARIABLES overrides the page
// size like any other setting.
TEST(Isorun, PrintConfigShowsRangesAndPageVariables) {
  const outcome plain = run_isorun({"--print-config"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_TRUE(contains(plain.out, "valid values")) << plain.out;
  EXPECT_TRUE(contains(plain.out, "power of two, 1024 to 1073741824")) << plain.out;
  const outcome pages = run_isorun({"--print-config"}, {"ISO_PAGE_VARIABLES=64"});
  ASSERT_EQ(pages.exit_code, 0) << pages.err;
  bool found = false;
  for (const std::string& line : lines_of(pages.out)) {
    if (line.rfind("ISO_PAGE_VARIABLES ", 0) == 0) {
      found = true;
      EXPECT_TRUE(contains(line, " 64 ")) << line;
    }
  }
  EXPECT_TRUE(found) << pages.out;
}

}  // namespace

namespace {

// ISO_DEBUG shows what a user debugging a job needs, per component: pulses (nicfw.siu),
// tokens (nicfw.tm) and credits (nicfw.credit); nothing at all when it is not set.
TEST(Isorun, DebugLogsShowPulsesTokensAndCreditsPerComponent) {
  const std::vector<std::string> flood = {"-n", "2", "--", PROBE_PATH, "flood"};
  const outcome all = run_isorun(flood, {"ISO_DEBUG=nicfw", "ISO_CREDIT_WINDOW=4096"});
  ASSERT_TRUE(all.exited);
  EXPECT_EQ(all.exit_code, 0) << all.err;
  for (const char* expected :
       {"debug nicfw.siu: node ", " closed pulse ", " sends token ",
        "debug nicfw.tm: token manager of switch 0 sends token ", "debug nicfw.credit: node ",
        " waits for credit to send 3072 bytes of class 1 to node "}) {
    EXPECT_TRUE(contains(all.err, expected)) << "no '" << expected << "' in:\n" << all.err;
  }

  const outcome tokens = run_isorun(flood, {"ISO_DEBUG=nicfw.tm", "ISO_CREDIT_WINDOW=4096"});
  EXPECT_EQ(tokens.exit_code, 0) << tokens.err;
  EXPECT_TRUE(contains(tokens.err, "debug nicfw.tm: ")) << tokens.err;
  EXPECT_FALSE(contains(tokens.err, "nicfw.siu")) << tokens.err;
  EXPECT_FALSE(contains(tokens.err, "nicfw.credit")) << tokens.err;

  const outcome quiet = run_isorun(flood, {"ISO_CREDIT_WINDOW=4096"});
  EXPECT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "");
}

}  // namespace

namespace {

// A process that reopens the running job's segment through /proc and knows the secret
// cannot take the place of a node that is running: refused, and the job goes on unharmed.
TEST(Isorun, AStrangerCannotJoinARunningJob) {
  const outcome result = run_isorun({"-n", "2", "--", PROBE_PATH, "stranger"});
  ASSERT_TRUE(result.exited);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(contains(result.out, "stranger 0: 1")) << result.out;
  EXPECT_TRUE(contains(result.out, "stranger 1: 1")) << result.out;
  EXPECT_TRUE(contains(result.out, "node 0 ok")) << result.out;
  EXPECT_TRUE(contains(result.out, "node 1 ok")) << result.out;
  EXPECT_TRUE(contains(result.err, "node 0 of this job has already been joined")) << result.err;
  EXPECT_TRUE(contains(result.err, "node 1 of this job has already been joined")) << result.err;
}

}  // namespace
