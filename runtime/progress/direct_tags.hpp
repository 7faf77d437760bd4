// The first byte of every direct (non-isotach) host packet: which host unit it is for
// (event_loop::add_direct_unit). One list, so that two units never share a tag.
#pragma once

#include <cstdint>

namespace iso::runtime {

enum class direct_tag : std::uint8_t {
  read_reply = 1,  // the values of a read, to its issuer (shared memory manager)
  plain = 2,       // a plain message (plain_messages)
  echo = 3,        // paranoid mode: where an isochron executed, to its issuer (SMM)
};

}  // namespace iso::runtime
