#include "comm/ucx/worker_address.hpp"

#include <array>
#include <cstring>

#include "absl/strings/str_format.h"

namespace iso::comm::ucx_detail {
namespace {

constexpr std::array<char, 8> kTag = {'i', 's', 'o', '-', 'u', 'c', 'x', '1'};

struct envelope {
  std::array<char, 8> tag;
  std::uint32_t owner;
  std::uint32_t length;
  std::uint64_t checksum;
};
static_assert(sizeof(envelope) == 24);

// FNV-1a: catches truncation and stray bytes; not a defence against a forger.
std::uint64_t checksum(std::string_view bytes) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace

std::string seal_worker_address(node_id owner, std::span<const std::byte> ucx_address) {
  const std::string_view inner(reinterpret_cast<const char*>(ucx_address.data()),
                               ucx_address.size());
  const envelope e{kTag, owner, static_cast<std::uint32_t>(inner.size()), checksum(inner)};
  std::string sealed(sizeof(e) + inner.size(), '\0');
  std::memcpy(sealed.data(), &e, sizeof(e));
  std::memcpy(sealed.data() + sizeof(e), inner.data(), inner.size());
  return sealed;
}

absl::StatusOr<std::string_view> open_worker_address(node_id expected_owner,
                                                     std::string_view sealed) {
  envelope e;
  if (sealed.size() < sizeof(e)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the address given for node %u has %u bytes: too short to be a ucx worker address",
        expected_owner, sealed.size()));
  }
  std::memcpy(&e, sealed.data(), sizeof(e));
  const std::string_view inner = sealed.substr(sizeof(e));
  if (e.tag != kTag) {
    return absl::InvalidArgumentError(
        absl::StrFormat("the address given for node %u is not a ucx worker address of this program",
                        expected_owner));
  }
  if (e.owner != expected_owner) {
    return absl::InvalidArgumentError(
        absl::StrFormat("the address given for node %u is node %u's", expected_owner, e.owner));
  }
  if (e.length != inner.size() || e.checksum != checksum(inner)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the address given for node %u is damaged (%u bytes where %u were sealed, or a "
        "checksum mismatch)",
        expected_owner, inner.size(), e.length));
  }
  return inner;
}

}  // namespace iso::comm::ucx_detail
