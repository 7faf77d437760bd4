// The envelope around a UCX worker address as it travels through a bootstrap. UCX parses an
// address without knowing its length, so bytes that are not an address it made could crash
// it; the envelope (a tag, the node it belongs to, the length and a checksum) lets connect()
// turn garbage or a miswired exchange into an error that names the node instead.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "comm/transport.hpp"

namespace iso::comm::ucx_detail {

// `ucx_address` wrapped for node `owner`.
std::string seal_worker_address(node_id owner, std::span<const std::byte> ucx_address);

// The UCX bytes inside `sealed`, which connect() received as node `expected_owner`'s address.
// InvalidArgument (naming the node and what is wrong) for anything seal_worker_address()
// did not make for that node.
absl::StatusOr<std::string_view> open_worker_address(node_id expected_owner,
                                                     std::string_view sealed);

}  // namespace iso::comm::ucx_detail
