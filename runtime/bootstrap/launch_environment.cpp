#include "runtime/bootstrap/launch_environment.hpp"

#include <cstdlib>
#include <string_view>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"

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

absl::StatusOr<launch_environment> read_launch_environment() {
  launch_environment env;
  const std::optional<std::string> size = variable("ISO_SIZE");
  if (!size) return env;  // no launcher: a job of one node
  env.from_launcher = true;
  absl::StatusOr<std::uint32_t> n = number("ISO_SIZE", *size, 4096);
  if (!n.ok()) return n.status();
  if (*n == 0) return absl::InvalidArgumentError("ISO_SIZE is 0; a job has at least one node");
  env.size = *n;

  const std::string transport = variable("ISO_TRANSPORT").value_or("shm");
  if (transport == "shm") {
    env.transport = transport_kind::shm;
  } else if (transport == "inproc") {
    env.transport = transport_kind::inproc;
  } else {
    return absl::InvalidArgumentError(
        absl::StrFormat("ISO_TRANSPORT is '%s'; expected shm or inproc", transport));
  }
  env.job_id = variable("ISO_JOB_ID").value_or("");
  env.secret = variable("ISO_JOB_SECRET").value_or("");

  if (env.transport == transport_kind::inproc) return env;
  const std::optional<std::string> rank = variable("ISO_RANK");
  if (!rank) return absl::InvalidArgumentError("ISO_SIZE is set but ISO_RANK is not");
  absl::StatusOr<std::uint32_t> r = number("ISO_RANK", *rank, 4095);
  if (!r.ok()) return r.status();
  if (*r >= env.size) {
    return absl::InvalidArgumentError(
        absl::StrFormat("ISO_RANK is %u but ISO_SIZE is %u", *r, env.size));
  }
  env.rank = *r;
  const std::optional<std::string> fd = variable("ISO_SHM_FD");
  if (!fd) {
    return absl::InvalidArgumentError(
        "ISO_SHM_FD is not set: an shm job must be started by isorun (or give the segment)");
  }
  absl::StatusOr<std::uint32_t> f = number("ISO_SHM_FD", *fd, 1 << 20);
  if (!f.ok()) return f.status();
  env.shm_fd = static_cast<int>(*f);
  return env;
}

}  // namespace iso::runtime
