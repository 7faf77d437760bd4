// Isotach memory: pages of 32- or 64-bit variables, each page with a copyset (the nodes
// that hold a copy). Reads go to the nearest copy; write, sched and assign go to every copy.
// Placement changes performance, never semantics.
//
// Allocation is collective: every node makes the same allocate() calls in the same order,
// so every node builds the same table without talking.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "nicfw/topology.hpp"
#include "runtime/smm/node_id.hpp"

namespace iso::runtime {

struct page_info {
  std::uint8_t width = 8;           // bytes per variable
  std::vector<node_id> copyset;     // ascending
  node_id read_target = 0;          // nearest copy (this node when it holds one)
  std::uint32_t local_index = ~0u;  // index of this node's copy, or ~0u
  std::uint32_t target_index = 0;   // index of the copy at read_target, among its pages
  [[nodiscard]] bool local() const { return local_index != ~0u; }
};

// Which nodes hold page `page_in_allocation` of an allocation.
using copyset_rule = std::function<std::vector<node_id>(std::uint64_t page_in_allocation)>;

class page_table {
 public:
  // `page_variables` must be a power of two (addresses split into page and offset by
  // shifting, on every operation).
  page_table(node_id self, const nicfw::topology& topo, std::uint32_t page_variables);

  // Adds pages for `count` variables of `width` bytes, placed by `rule`, starting on a new
  // page; returns the first address. InvalidArgument names a bad node or an empty copyset.
  absl::StatusOr<std::uint64_t> allocate(std::uint64_t count, std::uint8_t width,
                                         const copyset_rule& rule);

  // The page holding `address`; OutOfRange when it is outside every page.
  [[nodiscard]] absl::StatusOr<const page_info*> find(std::uint64_t address) const;
  // The same, and InvalidArgument when its variables are not `width` bytes wide.
  [[nodiscard]] absl::StatusOr<const page_info*> find(std::uint64_t address,
                                                      std::uint8_t width) const;
  // The same without building a status: null when `address` is outside every page.
  [[nodiscard]] const page_info* lookup(std::uint64_t address) const {
    const std::uint64_t page = address >> page_shift_;
    return page < pages_.size() ? &pages_[page] : nullptr;
  }

  [[nodiscard]] std::uint32_t page_variables() const { return page_variables_; }
  [[nodiscard]] std::uint64_t page_of(std::uint64_t address) const {
    return address >> page_shift_;
  }
  [[nodiscard]] std::uint64_t offset_in_page(std::uint64_t address) const {
    return address & (page_variables_ - 1);
  }
  [[nodiscard]] const std::vector<page_info>& pages() const { return pages_; }
  [[nodiscard]] std::uint32_t local_pages() const { return local_pages_; }
  // Largest logical distance from this node to any member of `nodes`, self excluded.
  [[nodiscard]] std::uint32_t distance_to(node_id node) const {
    return topo_.distance(self_, node);
  }

 private:
  node_id self_;
  const nicfw::topology& topo_;
  std::uint32_t page_variables_;
  std::uint32_t page_shift_;
  std::vector<page_info> pages_;
  std::uint32_t local_pages_ = 0;
  std::vector<std::uint32_t> pages_held_;  // by node
};

}  // namespace iso::runtime
