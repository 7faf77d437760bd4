#include "runtime/smm/page_table.hpp"

#include <algorithm>
#include <bit>

#include "absl/strings/str_format.h"
#include "base/check.hpp"

namespace iso::runtime {

page_table::page_table(node_id self, const nicfw::topology& topo, std::uint32_t page_variables)
    : self_(self),
      topo_(topo),
      page_variables_(page_variables),
      page_shift_(static_cast<std::uint32_t>(std::countr_zero(page_variables))) {
  ISO_CHECK(std::has_single_bit(page_variables))
      << "page size " << page_variables << " is not a power of two";
}

absl::StatusOr<std::uint64_t> page_table::allocate(std::uint64_t count, std::uint8_t width,
                                                   const copyset_rule& rule) {
  if (width != 4 && width != 8) {
    return absl::InvalidArgumentError(absl::StrFormat("variable width %u is not 4 or 8", width));
  }
  if (count == 0) return absl::InvalidArgumentError("cannot allocate 0 variables");
  const std::uint64_t first = pages_.size() * std::uint64_t{page_variables_};
  const std::uint64_t pages = (count + page_variables_ - 1) / page_variables_;
  std::vector<page_info> added;
  for (std::uint64_t p = 0; p < pages; ++p) {
    page_info info;
    info.width = width;
    info.copyset = rule(p);
    std::sort(info.copyset.begin(), info.copyset.end());
    info.copyset.erase(std::unique(info.copyset.begin(), info.copyset.end()), info.copyset.end());
    if (info.copyset.empty()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("page %u of the allocation has an empty copyset", p));
    }
    for (node_id n : info.copyset) {
      if (n >= topo_.nodes()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "page %u is placed on node %u but the job has %u nodes", p, n, topo_.nodes()));
      }
    }
    if (std::binary_search(info.copyset.begin(), info.copyset.end(), self_)) {
      info.read_target = self_;
    } else {
      // The nearest copy; ties go to the lowest node so that every run reads the same one.
      info.read_target =
          *std::min_element(info.copyset.begin(), info.copyset.end(), [&](node_id a, node_id b) {
            return std::make_pair(topo_.distance(self_, a), a) <
                   std::make_pair(topo_.distance(self_, b), b);
          });
    }
    added.push_back(std::move(info));
  }
  if (pages_held_.empty()) pages_held_.resize(topo_.nodes());
  for (page_info& info : added) {
    if (info.read_target == self_) info.local_index = local_pages_++;
    // Every node numbers the pages it holds in allocation order, so this one can tell
    // where its read target keeps its copy.
    info.target_index = pages_held_[info.read_target];
    for (node_id n : info.copyset) ++pages_held_[n];
    pages_.push_back(std::move(info));
  }
  return first;
}

absl::StatusOr<const page_info*> page_table::find(std::uint64_t address) const {
  if (const page_info* page = lookup(address)) return page;
  {
    return absl::OutOfRangeError(
        absl::StrFormat("address %u is outside isotach memory (%u variables allocated)", address,
                        pages_.size() * std::uint64_t{page_variables_}));
  }
}

absl::StatusOr<const page_info*> page_table::find(std::uint64_t address, std::uint8_t width) const {
  absl::StatusOr<const page_info*> page = find(address);
  if (page.ok() && (*page)->width != width) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "address %u holds %u-bit variables, not %u-bit", address, (*page)->width * 8, width * 8));
  }
  return page;
}

}  // namespace iso::runtime
