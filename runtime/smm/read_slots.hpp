// Where read results land: one slot per read operation (a block read fills many values),
// named in the operation so that the copy holder's reply finds it. A value handle owns its
// slot; a handle dropped before its values arrive leaves the slot to be freed on arrival.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"

namespace iso::runtime {

class read_slots {
 public:
  struct ticket {
    std::uint32_t slot = 0;
    std::uint32_t generation = 0;
  };

  ticket open(std::uint32_t count);
  // Stores values arriving for `slot` from `first` on. InvalidArgument when they do not fit
  // an open slot (replies are input from other processes).
  [[nodiscard]] absl::Status fill(std::uint32_t slot, std::uint32_t first,
                                  std::span<const std::uint64_t> values);
  // All of an open slot's values at once, none of which has arrived yet (the caller
  // served the whole read itself; nothing to check).
  void fill_all(std::uint32_t slot, std::span<const std::uint64_t> values);
  [[nodiscard]] bool ready(ticket t) const;
  [[nodiscard]] std::span<const std::uint64_t> values(ticket t) const;
  void close(ticket t);
  [[nodiscard]] std::size_t outstanding() const { return outstanding_; }
  // How many values `slot` takes.
  [[nodiscard]] std::size_t size(std::uint32_t slot) const { return slots_[slot].values.size(); }

 private:
  struct slot_state {
    std::vector<std::uint64_t> values;
    std::vector<std::uint8_t> filled;  // not vector<bool>: set one by one on every read
    std::uint32_t missing = 0;
    std::uint32_t generation = 0;
    bool open = false;
    bool abandoned = false;
  };
  void free(std::uint32_t slot);

  std::vector<slot_state> slots_;
  std::vector<std::uint32_t> free_;
  std::size_t outstanding_ = 0;  // slots still waiting for values
};

}  // namespace iso::runtime
