#include "runtime/fabric/emulated_host.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace iso::runtime {

std::string emulated_host_name(const std::string& prefix, std::uint32_t rank,
                               std::uint32_t nodes_per_host) {
  return absl::StrCat(prefix, rank / nodes_per_host);
}

absl::Status enter_emulated_host(const std::string& netns_name) {
  const std::string path = "/run/netns/" + netns_name;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "cannot open network namespace '%s' (%s): %s", netns_name, path, ::strerror(errno)));
  }
  const int entered = ::setns(fd, CLONE_NEWNET);
  const int setns_errno = errno;
  ::close(fd);
  if (entered != 0) {
    return absl::FailedPreconditionError(absl::StrFormat("cannot enter network namespace '%s': %s",
                                                         netns_name, ::strerror(setns_errno)));
  }
  // UCX finds network devices in /sys/class/net, which shows the namespace of whoever
  // mounted /sys: mount it again for this namespace, in a mount namespace of this node's
  // own (as `ip netns exec` does), never touching the machine's.
  if (::unshare(CLONE_NEWNS) != 0 ||
      ::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0 ||
      ::umount2("/sys", MNT_DETACH) != 0 ||
      ::mount(netns_name.c_str(), "/sys", "sysfs", 0, nullptr) != 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "cannot show network namespace '%s' in /sys: %s", netns_name, ::strerror(errno)));
  }
  if (::unshare(CLONE_NEWIPC) != 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "cannot make an IPC namespace for emulated host '%s': %s", netns_name, ::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace iso::runtime
