// The first byte of every direct (non-isotach) host packet: which host unit it is for
// (event_loop::add_direct_unit). One list, so that two units never share a tag.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "nicfw/host_channel.hpp"

namespace iso::runtime {

enum class direct_tag : std::uint8_t {
  read_reply = 1,  // the values of a read, to its issuer (shared memory manager)
  plain = 2,       // a plain message (plain_messages)
  echo = 3,        // paranoid mode: where an isochron executed, to its issuer (SMM)
  objects = 4,     // a call of a single-copy object and its reply (object_table)
  fork = 5,        // fork requests and their answers (fork_service), as plain messages
};

// The error for a direct packet that no unit takes, or that is malformed for its tag.
inline absl::Status malformed_direct_packet(const nicfw::delivery& d) {
  return absl::InvalidArgumentError(absl::StrFormat(
      "malformed direct packet of %u bytes from node %u", d.payload.size(), d.source));
}

}  // namespace iso::runtime
