// A test-only transport decorator that breaks the transport's promises once, on purpose,
// so that tests can show the layers above detect it (paranoid mode). Never use it for
// anything else.
//
//   reorder:D:N   the N-th packet (from 0) this node sends to node D goes out after the
//                 packet that follows it
//   corrupt:D:N   the last byte of the N-th packet this node sends to node D is flipped
// An optional fourth field, :B, counts only packets of at least B bytes (to aim at data
// packets rather than tokens).
//
//   absl::StatusOr<fault_plan> plan = parse_fault_plan("corrupt:1:40");
//   std::unique_ptr<transport> t = with_faults(std::move(inner), *plan);
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "comm/transport.hpp"

namespace iso::comm {

struct fault_plan {
  enum class kind { reorder, corrupt } what = kind::corrupt;
  node_id destination = 0;
  std::uint64_t packet = 0;
  std::uint64_t min_bytes = 0;
};

// InvalidArgument naming what is wrong with `text`.
absl::StatusOr<fault_plan> parse_fault_plan(const std::string& text);

std::unique_ptr<transport> with_faults(std::unique_ptr<transport> inner, const fault_plan& plan);

}  // namespace iso::comm
