#include "runtime/bootstrap/launch_environment.hpp"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <string_view>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "base/log.hpp"
#include "runtime/bootstrap/pmix_session.hpp"

namespace iso::runtime {
namespace {

std::optional<std::string> variable(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

absl::StatusOr<std::uint32_t> number(const char* name, const std::string& text,
                                     std::uint32_t limit) {
  std::uint32_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value > limit) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s is '%s', not a number from 0 to %u", name, text, limit));
  }
  return value;
}

}  // namespace

// Whether this build has the ucx fabric: without it, a process that a PMIx launcher
// started can be a job of one node only (ISO_TRANSPORT=ucx fails, named).
#ifdef ISO_HAVE_UCX
constexpr bool kHaveUcx = true;
#else
constexpr bool kHaveUcx = false;
#endif

bool build_has_ucx() { return kHaveUcx; }

absl::StatusOr<launch_environment> read_launch_environment() {
  return read_launch_environment(kHaveUcx);
}

absl::StatusOr<launch_environment> read_launch_environment(bool have_ucx) {
  launch_environment env;
  const std::optional<std::string> transport = variable(kTransportVariable);
  if (transport && *transport != "shm" && *transport != "inproc" && *transport != "ucx") {
    return absl::InvalidArgumentError(
        absl::StrFormat("ISO_TRANSPORT is '%s'; expected shm, inproc or ucx", *transport));
  }
  const std::optional<std::string> size = variable(kSizeVariable);
  if (!size) {
    // No isorun: a PMIx launcher's job (the PMIx session gives rank and size), or a job of one.
    if (transport == "ucx" && !have_ucx) {
      return absl::FailedPreconditionError(
          "ISO_TRANSPORT is 'ucx', but this build of iso has no UCX transport: UCX "
          "(libucx-dev) was not found when it was built");
    }
    if (transport == "ucx" || (!transport && pmix_session::launched_by_pmix())) {
      env.transport = transport_kind::ucx;
      env.ucx_automatic = !transport.has_value();
      env.from_launcher = true;
      if (!have_ucx) {
        env.transport = transport_kind::shm;
        env.pmix_without_fabric = true;
      }
    }
    return env;
  }
  if (transport == "ucx") {
    return absl::InvalidArgumentError(
        "ISO_TRANSPORT is 'ucx' but ISO_SIZE is set: a ucx job is started by a PMIx launcher "
        "(mpirun, srun --mpi=pmix), which gives rank and size; isorun starts shm and inproc "
        "jobs");
  }
  env.from_launcher = true;
  absl::StatusOr<std::uint32_t> n = number(kSizeVariable, *size, 4096);
  if (!n.ok()) return n.status();
  if (*n == 0) return absl::InvalidArgumentError("ISO_SIZE is 0; a job has at least one node");
  env.size = *n;

  env.transport = transport == "inproc" ? transport_kind::inproc : transport_kind::shm;
  env.job_id = variable(kJobIdVariable).value_or("");
  env.secret = variable(kJobSecretVariable).value_or("");
  if (const std::optional<std::string> over = variable(kOversubscribedVariable)) {
    if (*over != "0" && *over != "1") {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s is '%s'; expected 0 or 1", kOversubscribedVariable, *over));
    }
    env.oversubscribed = *over == "1";
  }

  if (env.transport == transport_kind::inproc) return env;
  const std::optional<std::string> rank = variable(kRankVariable);
  if (!rank) return absl::InvalidArgumentError("ISO_SIZE is set but ISO_RANK is not");
  absl::StatusOr<std::uint32_t> r = number(kRankVariable, *rank, 4095);
  if (!r.ok()) return r.status();
  if (*r >= env.size) {
    return absl::InvalidArgumentError(
        absl::StrFormat("ISO_RANK is %u but ISO_SIZE is %u", *r, env.size));
  }
  env.rank = *r;
  const std::optional<std::string> fd = variable(kShmFdVariable);
  if (!fd) {
    return absl::InvalidArgumentError(
        "ISO_SHM_FD is not set: an shm job must be started by isorun (or give the segment)");
  }
  absl::StatusOr<std::uint32_t> f = number(kShmFdVariable, *fd, 1 << 20);
  if (!f.ok()) return f.status();
  env.shm_fd = static_cast<int>(*f);
  if (const std::optional<std::string> report = variable(kReportFdVariable)) {
    absl::StatusOr<std::uint32_t> p = number(kReportFdVariable, *report, 1 << 20);
    if (!p.ok()) return p.status();
    env.report_fd = static_cast<int>(*p);
  }
  return env;
}

namespace {

// What descriptor `fd` refers to, for error messages: its /proc link, or a description.
std::string describe_descriptor(int fd) {
  std::array<char, 512> target{};
  const std::string link = absl::StrFormat("/proc/self/fd/%d", fd);
  const ssize_t n = ::readlink(link.c_str(), target.data(), target.size() - 1);
  if (n <= 0) return "an unnamed object";
  return absl::StrFormat("'%s'", std::string_view(target.data(), static_cast<std::size_t>(n)));
}

absl::Status not_open(const char* name, int fd) {
  return absl::FailedPreconditionError(absl::StrFormat(
      "%s is %d, which is not an open descriptor here (%s): a node's descriptors reach only the "
      "process isorun started, not the processes it starts",
      name, fd, ::strerror(errno)));
}

absl::Status check_segment(const launch_environment& env, int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return not_open(kShmFdVariable, fd);
  struct statfs fs {};
  const bool on_tmpfs = ::fstatfs(fd, &fs) == 0 && fs.f_type == TMPFS_MAGIC;
  const bool shaped = S_ISREG(st.st_mode) && st.st_nlink == 0 && st.st_uid == ::geteuid() &&
                      (st.st_mode & 0777) == 0600 && on_tmpfs;
  // The launcher names the object after the job and unlinks it at once; /proc shows both.
  bool named = true;
  std::array<char, 512> target{};
  const std::string link = absl::StrFormat("/proc/self/fd/%d", fd);
  const ssize_t n = ::readlink(link.c_str(), target.data(), target.size() - 1);
  if (n > 0 && !env.job_id.empty()) {
    named = std::string_view(target.data(), static_cast<std::size_t>(n)) ==
            absl::StrFormat("/dev/shm/iso-%s (deleted)", env.job_id);
  }
  if (!shaped || !named) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "ISO_SHM_FD is %d, which is %s, not this job's shared memory segment (an unlinked "
        "owner-only object /dev/shm/iso-%s that isorun creates); refusing to use it",
        fd, describe_descriptor(fd), env.job_id));
  }
  return absl::OkStatus();
}

absl::Status check_report_pipe(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return not_open(kReportFdVariable, fd);
  const int flags = ::fcntl(fd, F_GETFL);
  if (!S_ISFIFO(st.st_mode) || flags == -1 || (flags & O_ACCMODE) != O_WRONLY) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "ISO_REPORT_FD is %d, which is %s, not the write end of isorun's report pipe", fd,
        describe_descriptor(fd)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status claim_launch_descriptors(const launch_environment& env) {
  if (env.shm_fd) {
    if (absl::Status s = check_segment(env, *env.shm_fd); !s.ok()) return s;
  }
  if (env.report_fd) {
    if (absl::Status s = check_report_pipe(*env.report_fd); !s.ok()) return s;
  }
  for (const std::optional<int> fd : {env.shm_fd, env.report_fd}) {
    if (fd && ::fcntl(*fd, F_SETFD, FD_CLOEXEC) == -1) {
      return absl::FailedPreconditionError(
          absl::StrFormat("cannot make descriptor %d close-on-exec: %s", *fd, ::strerror(errno)));
    }
  }
  return absl::OkStatus();
}

absl::Status join_pmix_launcher(launch_environment& env, std::shared_ptr<pmix_session>& session) {
  absl::StatusOr<std::shared_ptr<pmix_session>> opened = pmix_session::open();
  const bool automatic = env.ucx_automatic;
  if (absl::IsUnavailable(opened.status()) && automatic) {
    ISO_LOG(runtime, debug, "no PMIx launcher after all (%s); a job of one node",
            std::string(opened.status().message()));
    env = launch_environment{};
    return absl::OkStatus();
  }
  if (absl::IsUnavailable(opened.status())) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "ISO_TRANSPORT is 'ucx', but %s: start a ucx job with mpirun or srun --mpi=pmix",
        std::string(opened.status().message())));
  }
  if (!opened.ok()) return opened.status();
  if (env.pmix_without_fabric) {
    if ((*opened)->size() > 1) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "a PMIx launcher started %u processes (this is rank %u), but this build of iso has "
          "no UCX transport to join them into one job (UCX, libucx-dev, was not found when it "
          "was built), and each alone would be a job of one node with wrong results; start "
          "the job with isorun -n %u instead",
          (*opened)->size(), (*opened)->rank(), (*opened)->size()));
    }
    env = launch_environment{};  // the launcher's job of one node is this process's job
    return absl::OkStatus();
  }
  session = *std::move(opened);
  env.size = session->size();
  env.rank = session->rank();
  env.secret = session->secret();
  env.job_id = session->job_name();
  return absl::OkStatus();
}

}  // namespace iso::runtime
