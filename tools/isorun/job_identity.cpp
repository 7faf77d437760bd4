#include "tools/isorun/job_identity.hpp"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include <array>
#include <cstdint>

#include "absl/strings/str_format.h"

namespace iso::isorun {
namespace {

constexpr std::size_t kRandomBytes = 16;

bool random_hex(std::string* hex, std::string* error) {
  std::array<std::uint8_t, kRandomBytes> buffer{};
  std::size_t filled = 0;
  while (filled < buffer.size()) {
    const ssize_t n = ::getrandom(buffer.data() + filled, buffer.size() - filled, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      *error = absl::StrFormat("getrandom: %s", ::strerror(errno));
      return false;
    }
    filled += static_cast<std::size_t>(n);
  }
  static constexpr char kDigits[] = "0123456789abcdef";
  hex->clear();
  for (const std::uint8_t byte : buffer) {
    hex->push_back(kDigits[byte >> 4]);
    hex->push_back(kDigits[byte & 0xf]);
  }
  return true;
}

}  // namespace

std::optional<job_identity> make_job_identity(std::string* error) {
  job_identity identity;
  if (!random_hex(&identity.id, error) || !random_hex(&identity.secret, error)) {
    return std::nullopt;
  }
  return identity;
}

int create_job_segment(const std::string& job_id, std::string* error) {
  const std::string name = "/iso-" + job_id;
  const int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd == -1) {
    *error = absl::StrFormat("cannot create shared memory '%s': %s", name, ::strerror(errno));
    return -1;
  }
  // Unlinked before anything else can fail or crash; the open descriptor keeps it alive.
  if (::shm_unlink(name.c_str()) == -1) {
    *error = absl::StrFormat("cannot unlink shared memory '%s': %s", name, ::strerror(errno));
    ::close(fd);
    return -1;
  }
  // glibc already opens it close-on-exec, but POSIX does not promise that.
  if (::fcntl(fd, F_SETFD, FD_CLOEXEC) == -1) {
    *error = absl::StrFormat("cannot set close-on-exec on shared memory: %s", ::strerror(errno));
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace iso::isorun
