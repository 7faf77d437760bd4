#include "comm/transport.hpp"

#include <utility>

#include "base/check.hpp"

namespace iso::comm {

held_packet& held_packet::operator=(held_packet&& other) noexcept {
  if (this != &other) {
    release();
    owner_ = std::exchange(other.owner_, nullptr);
    source_ = other.source_;
    bytes_ = other.bytes_;
    token_ = other.token_;
  }
  return *this;
}

void held_packet::release() {
  if (transport* owner = std::exchange(owner_, nullptr)) owner->release_held(source_, token_);
}

held_packet received_packet::hold() {
  ISO_CHECK(!held_) << "a packet from node " << source_ << " was held twice";
  held_ = true;
  return held_packet(owner_, source_, bytes_, token_);
}

}  // namespace iso::comm
