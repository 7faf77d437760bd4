#include "runtime/fabric/host_windows.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/log.hpp"
#include "runtime/bootstrap/process_probe.hpp"

namespace iso::runtime {

namespace {

constexpr char kHostKey[] = "host.id";
constexpr char kLayoutKey[] = "host.windows";  // the lowest node's: "<stride> <name>" or "none"
constexpr char kMappedKey[] = "host.mapped";   // every member's: "1" or "0"
constexpr std::size_t kPage = 4096;

// "/iso-windows-<pid>-<random>": the maker's pid, so that a later job can tell the object of
// a maker that died before removing it.
constexpr char kObjectPrefix[] = "iso-windows-";

std::string object_name() {
  std::random_device source;
  return absl::StrFormat("/%s%d-%08x%08x", kObjectPrefix, ::getpid(), source(), source());
}

// Whether the process `maker` is gone: there is none, or it is a zombie (dead, not yet
// reaped by its parent). One this node may not signal, or cannot read about, is not ours to
// judge.
bool maker_gone(pid_t maker) {
  if (::kill(maker, 0) != 0) return errno == ESRCH;
  const process_sample sample = probe_process(maker);
  return sample.start_time != 0 && sample.state == process_state::gone;
}

// Removes the objects of makers that are gone: a lowest node killed while its job started
// (between making its object and every node of its host mapping it) could not remove its
// name, and the object holds its reserved memory until someone does. A maker in another
// pid namespace looks gone too; removing a name only while its job starts costs that job
// its windows (its nodes run without them, saying why), never its data.
void remove_objects_of_gone_makers(std::uint32_t self) {
  DIR* dir = ::opendir("/dev/shm");
  if (dir == nullptr) return;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (!name.starts_with(kObjectPrefix)) continue;
    const std::string rest = name.substr(std::strlen(kObjectPrefix));
    int maker = 0;
    if (!absl::SimpleAtoi(rest.substr(0, rest.find('-')), &maker) || maker <= 0) continue;
    if (!maker_gone(maker)) continue;
    if (::shm_unlink(absl::StrCat("/", name).c_str()) == 0) {
      ISO_LOG(runtime, info, "node %u removed /dev/shm/%s: its maker (pid %d) is gone", self, name,
              maker);
    }
  }
  ::closedir(dir);
}

// Maps the object `fd` names, `bytes` long, shared; nullptr (errno set) where it cannot.
std::byte* map_shared(int fd, std::size_t bytes) {
  void* at = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return at == MAP_FAILED ? nullptr : static_cast<std::byte*>(at);
}

}  // namespace

std::string host_windows::host_identity() { return kernel_and_namespace("net"); }

host_windows::host_windows(host_windows&& other) noexcept
    : base_(std::exchange(other.base_, nullptr)),
      mapped_bytes_(std::exchange(other.mapped_bytes_, 0)),
      stride_(other.stride_),
      nodes_(other.nodes_),
      members_(std::move(other.members_)) {}

host_windows& host_windows::operator=(host_windows&& other) noexcept {
  if (this != &other) {
    release();
    base_ = std::exchange(other.base_, nullptr);
    mapped_bytes_ = std::exchange(other.mapped_bytes_, 0);
    stride_ = other.stride_;
    nodes_ = other.nodes_;
    members_ = std::move(other.members_);
  }
  return *this;
}

host_windows::~host_windows() { release(); }

void host_windows::release() noexcept {
  if (base_ != nullptr) ::munmap(base_, mapped_bytes_);
  base_ = nullptr;
  mapped_bytes_ = 0;
  members_.clear();
}

absl::StatusOr<host_windows> host_windows::open(pmix_session& session, std::size_t window_bytes,
                                                absl::Duration timeout) {
  const std::uint32_t self = session.rank();
  const std::string identity = window_bytes > 0 ? host_identity() : "";
  // "-" never equals an identity: such a node shares with nobody.
  if (absl::Status s = session.put(kHostKey, identity.empty() ? "-" : identity); !s.ok()) {
    return s;
  }
  if (absl::Status s = session.fence(timeout); !s.ok()) return s;

  host_windows out;
  out.nodes_ = session.size();
  std::vector<std::uint32_t> members;
  if (!identity.empty()) {
    for (std::uint32_t n = 0; n < session.size(); ++n) {
      absl::StatusOr<std::string> theirs = session.get(n, kHostKey);
      if (!theirs.ok()) return theirs.status();
      if (*theirs == identity) members.push_back(n);
    }
  }
  // Alone on its host (or without windows), a node has nothing to share, but it still
  // takes part in the job's fences below.
  const bool shares = members.size() > 1;
  const bool leads = shares && members.front() == self;

  // The lowest node of the host makes the object and says how it is laid out. Whatever
  // way this call ends, the descriptor is closed, and the name it made is removed (once
  // every member has mapped the object, or at once when something failed).
  int fd = -1;
  std::string made;
  absl::Cleanup close_and_unlink = [&fd, &made] {
    if (fd >= 0) ::close(fd);
    if (!made.empty()) ::shm_unlink(made.c_str());
  };
  std::string name;
  std::size_t stride = 0;
  std::string layout = "none";
  if (leads) {
    stride = (window_bytes + kPage - 1) / kPage * kPage;
    remove_objects_of_gone_makers(self);
    name = object_name();
    fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
      ISO_LOG(runtime, warn, "node %u: no same-host windows: shm_open(%s): %s", self, name,
              std::strerror(errno));
    } else {
      made = name;
      const std::size_t bytes = stride * members.size();
      // Reserved now, not as pages are first touched: where /dev/shm is too small, a
      // touch past its room would end the process with SIGBUS; here the job goes on
      // without windows.
      const int reserved = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes));
      if (reserved != 0) {
        ISO_LOG(runtime, warn, "node %u: no same-host windows: reserving %u bytes for %s: %s", self,
                bytes, name, std::strerror(reserved));
      } else {
        layout = absl::StrCat(stride, " ", name);
      }
    }
  }
  if (absl::Status s = session.put(kLayoutKey, layout); !s.ok()) return s;
  if (absl::Status s = session.fence(timeout); !s.ok()) return s;

  // Every member maps the object (the leader through the descriptor it made).
  bool mapped = false;
  if (shares) {
    absl::StatusOr<std::string> agreed = session.get(members.front(), kLayoutKey);
    if (!agreed.ok()) return agreed.status();
    const std::vector<std::string> parts = absl::StrSplit(*agreed, ' ');
    if (parts.size() == 2 && absl::SimpleAtoi(parts[0], &stride) && stride > 0) {
      name = parts[1];
      if (fd < 0) fd = ::shm_open(name.c_str(), O_RDWR, 0);
      struct stat st {};
      const std::size_t bytes = stride * members.size();
      std::string problem;
      if (fd < 0 || ::fstat(fd, &st) != 0) {
        problem = std::strerror(errno);
      } else if (static_cast<std::size_t>(st.st_size) != bytes) {
        problem = absl::StrFormat("it holds %d bytes, not %u", st.st_size, bytes);
      } else {
        out.base_ = map_shared(fd, bytes);
        if (out.base_ == nullptr) {
          problem = std::strerror(errno);
        } else {
          out.mapped_bytes_ = bytes;
        }
      }
      if (!problem.empty()) {
        ISO_LOG(runtime, warn, "node %u: no same-host windows: mapping %s: %s", self, name,
                problem);
      }
      mapped = out.base_ != nullptr;
    }
  }
  if (absl::Status s = session.put(kMappedKey, mapped ? "1" : "0"); !s.ok()) return s;
  if (absl::Status s = session.fence(timeout); !s.ok()) return s;

  // The windows are used only where every member has them: a window nobody writes would
  // keep its readers waiting for an owner that never moves on.
  bool all_mapped = mapped;
  for (std::uint32_t n : members) {
    if (!all_mapped) break;
    absl::StatusOr<std::string> theirs = session.get(n, kMappedKey);
    if (!theirs.ok()) return theirs.status();
    all_mapped = *theirs == "1";
  }
  if (!all_mapped) {
    out.release();
    return out;
  }
  out.stride_ = stride;
  out.members_ = std::move(members);
  ISO_LOG(runtime, debug, "node %u shares memory windows with the nodes of its host: %s", self,
          absl::StrJoin(out.members_, ","));
  return out;
}

std::vector<std::span<std::byte>> host_windows::spans() const {
  if (base_ == nullptr) return {};
  std::vector<std::span<std::byte>> out(nodes_);
  for (std::size_t i = 0; i < members_.size(); ++i) {
    out[members_[i]] = std::span<std::byte>(base_ + i * stride_, stride_);
  }
  return out;
}

}  // namespace iso::runtime
