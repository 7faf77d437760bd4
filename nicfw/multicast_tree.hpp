// The spanning trees a multicast travels along (LFC's MCAST, Bhoedjang section 4.2): each
// member of a group roots a tree of its own over the group. A group's members are listed in
// increasing node order; the tree rooted at the member with index r is the tree of index 0
// with every position p renamed to member (r + p) mod m, so the positions below are
// relative to the root (0) and the same rule serves every sender.
//
//   binary    children of p are 2p+1 and 2p+2 (heap numbering; the default)
//   chain     the child of p is p+1 (deepest: best throughput for one large sender)
//   binomial  children of p are p + 2^k for every 2^k > p (log2 m rounds, the classic
//             broadcast tree)
//
// Binary and binomial trees meet LFC's deadlock-freedom condition for one group (appendix
// A.1: the ring distance from the parent is below the distance to every child); chains do
// not, and overlapping groups may break it for any shape. multicast_service.hpp says how
// its credit lanes keep every case live (it relies on every child's position exceeding its
// parent's).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "comm/transport.hpp"

namespace iso::nicfw {

enum class tree_shape : std::uint8_t { binary = 0, chain = 1, binomial = 2 };

// "binary", "chain" or "binomial".
[[nodiscard]] std::string_view tree_shape_name(tree_shape shape);
// The shape a name names; InvalidArgument naming the value and the choices otherwise.
[[nodiscard]] absl::StatusOr<tree_shape> parse_tree_shape(std::string_view name);

// Position p's parent (none for the root, p = 0).
[[nodiscard]] std::optional<std::uint32_t> tree_parent(tree_shape shape, std::uint32_t p);
// Position p's children in a tree of `m` positions, in the order a NIC sends to them.
void tree_children(tree_shape shape, std::uint32_t p, std::uint32_t m,
                   std::vector<std::uint32_t>& out);

// Where a node stands in the tree of `root` over `members` (sorted, distinct).
struct tree_place {
  std::optional<comm::node_id> parent;  // none at the root
  std::vector<comm::node_id> children;
};
// The place of `self` in the tree rooted at `root`; nullopt when either is not a member.
[[nodiscard]] std::optional<tree_place> place_in_tree(tree_shape shape,
                                                      std::span<const comm::node_id> members,
                                                      comm::node_id root, comm::node_id self);

}  // namespace iso::nicfw
