// The classic `shmem_map` file: where the pages of the C API's flat isotach memory live.
//
//   # first_page  page_count  copyset
//   0             128         all        # the 32-bit variables on every node
//   128           4           0,2        # 64-bit addresses 65536..67583 on nodes 0 and 2
//
// One region per line, fields separated by blanks; `#` starts a comment. A line may also
// be in the Regehr report's syntax (B.2.2), `page [-page] :node [,node]*;`:
//
//   0-127 : 0,1,2;                          # pages 0..127 on nodes 0, 1 and 2
//   128   : 0;
//
// (an empty copyset, or `all`, is not possible there, as in the report). A page is
// kPageVariables consecutive addresses (page p holds addresses p*512 .. p*512+511). Pages no
// line names are on every node. A page may be named once: a second region over it is an
// error, since silently preferring either line would hide a typo. Placement changes
// performance, never semantics, so a map only matters for speed; but every node must read the
// same map, or the nodes would disagree about where a variable lives.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace iso::runtime {

class shmem_map {
 public:
  // Variables per page of a map file (the classic page size).
  static constexpr std::uint32_t kPageVariables = 512;

  // A map of `pages` pages, each on all of `nodes` nodes.
  shmem_map(std::uint64_t pages, std::uint32_t nodes);

  // Parses a map file's text for an address space of `pages` pages and a job of `nodes`
  // nodes. InvalidArgument says "<source>:<line>: " what is wrong and quotes the bad token.
  static absl::StatusOr<shmem_map> parse(std::string_view text, std::string_view source,
                                         std::uint64_t pages, std::uint32_t nodes);
  // Reads and parses the file at `path`; a file that cannot be read gives the error of the
  // system call (NotFound for a missing file), naming the path.
  static absl::StatusOr<shmem_map> load(const std::string& path, std::uint64_t pages,
                                        std::uint32_t nodes);

  // The nodes holding page `page` (ascending); every node for a page no line names and for
  // pages past the end.
  [[nodiscard]] std::vector<std::uint32_t> copyset(std::uint64_t page) const;
  // Whether a line of the file names page `page`.
  [[nodiscard]] bool named(std::uint64_t page) const {
    return page < placed_.size() && placed_[page].has_value();
  }
  [[nodiscard]] std::uint64_t pages() const { return placed_.size(); }

 private:
  std::uint32_t nodes_;
  // By page: the nodes a line named (ascending, no duplicates), or nothing: every node.
  std::vector<std::optional<std::vector<std::uint32_t>>> placed_;
};

}  // namespace iso::runtime
