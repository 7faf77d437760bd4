// A node's key-value board as a flat byte area: records of [key length][value length][key]
// [value], ended by a zero key length. Written only by its owner, read by others after a
// barrier, so it needs no locking; used by the shm and inproc bootstraps.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace iso::runtime {

class key_value_board {
 public:
  explicit key_value_board(std::span<std::byte> area) : area_(area) {}

  // Appends; a later put of the same key shadows the earlier one.
  [[nodiscard]] absl::Status put(std::string_view key, std::string_view value);

  // Reads a board written by another node (any area laid out by put()).
  [[nodiscard]] static absl::StatusOr<std::string> find(std::span<const std::byte> area,
                                                        std::string_view key);

 private:
  std::span<std::byte> area_;
  std::size_t used_ = 0;
};

}  // namespace iso::runtime
