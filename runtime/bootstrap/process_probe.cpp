#include "runtime/bootstrap/process_probe.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"

namespace iso::runtime {

std::uint64_t own_pid_namespace() {
  struct stat st {};
  if (::stat("/proc/self/ns/pid", &st) != 0) return 0;
  return static_cast<std::uint64_t>(st.st_ino);
}

std::string kernel_and_namespace(const char* kind) {
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string boot_id;
  std::getline(boot, boot_id);
  std::array<char, 64> ns{};
  const ssize_t length =
      ::readlink(absl::StrCat("/proc/self/ns/", kind).c_str(), ns.data(), ns.size() - 1);
  if (boot_id.empty() || length <= 0) return "";
  return absl::StrCat(boot_id, "/", std::string(ns.data(), static_cast<std::size_t>(length)));
}

process_sample probe_process(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  if (!in || !std::getline(in, line)) return {};
  // The command name (field 2) is in parentheses and may hold spaces or parentheses: the
  // fields after it start behind the last ')'.
  const std::size_t close = line.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream fields(line.substr(close + 1));
  // Field 3 is the state, field 9 the kernel's flags; the start time is field 22.
  char state = 0;
  fields >> state;
  std::string skipped;
  for (int i = 0; i < 5 && fields; ++i) fields >> skipped;
  std::uint64_t flags = 0;
  fields >> flags;
  for (int i = 0; i < 12 && fields; ++i) fields >> skipped;
  process_sample sample;
  if (!(fields >> sample.start_time)) return {};
  // PF_EXITING: killed or exiting, its files (sockets) already closing, not a zombie yet.
  constexpr std::uint64_t kExiting = 0x4;
  if ((flags & kExiting) != 0) state = 'X';
  switch (state) {
    case 'Z':
    case 'X':
    case 'x':
      sample.state = process_state::gone;
      break;
    case 'T':
    case 't':
      sample.state = process_state::stopped;
      break;
    default:
      sample.state = process_state::running;
      break;
  }
  return sample;
}

}  // namespace iso::runtime
