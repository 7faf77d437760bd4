// Block partitions of rows among nodes, and the placement that puts each page of a shared
// array on the node that owns its rows. The apps compute on rows they own and read them
// from their own copy, so where a page lives decides whether a read is a local copy.
//
//   const iso::apps::block_range mine = iso::apps::block_of(rows, node.count(), node.id());
//   auto a = node.allocate<double>(rows * row_vars,
//                                  iso::apps::rows_placement(rows, row_vars, node));
#pragma once

#include <cstddef>
#include <cstdint>
#include <iso/iso.hpp>

namespace iso::apps {

// Rows [begin, end) of a block partition.
struct block_range {
  std::size_t begin = 0;
  std::size_t end = 0;
  [[nodiscard]] std::size_t size() const { return end - begin; }
};

// Part `part` of `count` items split into `parts` nearly equal blocks (the first
// count % parts blocks one larger).
[[nodiscard]] inline block_range block_of(std::size_t count, std::size_t parts, std::size_t part) {
  const std::size_t base = count / parts;
  const std::size_t extra = count % parts;
  const std::size_t begin = part * base + (part < extra ? part : extra);
  return {begin, begin + base + (part < extra ? 1 : 0)};
}

// The part that holds item `item` of the partition above.
[[nodiscard]] inline std::size_t owner_of(std::size_t count, std::size_t parts, std::size_t item) {
  const std::size_t base = count / parts;
  const std::size_t extra = count % parts;
  const std::size_t cut = extra * (base + 1);  // items in the larger blocks
  return item < cut ? item / (base + 1) : extra + (item - cut) / base;
}

// Each page of an array of `rows` rows of `row_vars` variables on the node owning the row
// of its first variable (block_of over the job's nodes). A page that straddles two owners
// lives with the first: placement is only about speed.
[[nodiscard]] inline placement rows_placement(std::size_t rows, std::size_t row_vars,
                                              const node& n) {
  const std::size_t page_vars = n.options().page_variables;
  const std::size_t nodes = n.count();
  return placement::per_page([=](std::uint64_t page) {
    const std::size_t row = std::min<std::size_t>(page * page_vars / row_vars, rows - 1);
    return std::vector<node_id>{static_cast<node_id>(owner_of(rows, nodes, row))};
  });
}

}  // namespace iso::apps
