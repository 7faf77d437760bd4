#include "nicfw/multicast_tree.hpp"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace iso::nicfw {

std::string_view tree_shape_name(tree_shape shape) {
  switch (shape) {
    case tree_shape::binary:
      return "binary";
    case tree_shape::chain:
      return "chain";
    case tree_shape::binomial:
      return "binomial";
  }
  return "unknown";
}

absl::StatusOr<tree_shape> parse_tree_shape(std::string_view name) {
  for (tree_shape s : {tree_shape::binary, tree_shape::chain, tree_shape::binomial}) {
    if (name == tree_shape_name(s)) return s;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "multicast tree shape \"%s\": the shapes are binary, chain and binomial", name));
}

std::optional<std::uint32_t> tree_parent(tree_shape shape, std::uint32_t p) {
  if (p == 0) return std::nullopt;
  switch (shape) {
    case tree_shape::binary:
      return (p - 1) / 2;
    case tree_shape::chain:
      return p - 1;
    case tree_shape::binomial: {
      // The highest power of two in p was the last bit its parent added.
      std::uint32_t high = 1;
      while (high <= p / 2) high *= 2;
      return p - high;
    }
  }
  return std::nullopt;
}

void tree_children(tree_shape shape, std::uint32_t p, std::uint32_t m,
                   std::vector<std::uint32_t>& out) {
  out.clear();
  switch (shape) {
    case tree_shape::binary:
      for (std::uint64_t c : {2 * std::uint64_t{p} + 1, 2 * std::uint64_t{p} + 2}) {
        if (c < m) out.push_back(static_cast<std::uint32_t>(c));
      }
      return;
    case tree_shape::chain:
      if (std::uint64_t{p} + 1 < m) out.push_back(p + 1);
      return;
    case tree_shape::binomial:
      // Farthest first: the largest subtree starts earliest (the rounds of a binomial
      // broadcast), so list the children by decreasing distance.
      for (std::uint64_t step = 1; std::uint64_t{p} + step < m; step *= 2) {
        if (step > p) out.push_back(static_cast<std::uint32_t>(p + step));
      }
      std::reverse(out.begin(), out.end());
      return;
  }
}

std::optional<tree_place> place_in_tree(tree_shape shape, std::span<const comm::node_id> members,
                                        comm::node_id root, comm::node_id self) {
  const auto find = [&](comm::node_id n) -> std::optional<std::uint32_t> {
    const auto it = std::lower_bound(members.begin(), members.end(), n);
    if (it == members.end() || *it != n) return std::nullopt;
    return static_cast<std::uint32_t>(it - members.begin());
  };
  const std::optional<std::uint32_t> r = find(root);
  const std::optional<std::uint32_t> s = find(self);
  if (!r || !s) return std::nullopt;
  const auto m = static_cast<std::uint32_t>(members.size());
  const std::uint32_t p = (*s + m - *r) % m;
  const auto member_at = [&](std::uint32_t position) { return members[(*r + position) % m]; };
  tree_place place;
  if (const std::optional<std::uint32_t> parent = tree_parent(shape, p)) {
    place.parent = member_at(*parent);
  }
  std::vector<std::uint32_t> children;
  tree_children(shape, p, m, children);
  place.children.reserve(children.size());
  for (std::uint32_t c : children) place.children.push_back(member_at(c));
  return place;
}

}  // namespace iso::nicfw
