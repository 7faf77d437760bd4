#include "runtime/smm/read_slots.hpp"

#include "absl/strings/str_format.h"
#include "base/check.hpp"

namespace iso::runtime {

read_slots::ticket read_slots::open(std::uint32_t count) {
  std::uint32_t slot;
  if (free_.empty()) {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  } else {
    slot = free_.back();
    free_.pop_back();
  }
  slot_state& s = slots_[slot];
  s.values.assign(count, 0);
  s.filled.assign(count, false);
  s.missing = count;
  s.open = true;
  s.abandoned = false;
  ++s.generation;
  if (count != 0) ++outstanding_;
  return {slot, s.generation};
}

absl::Status read_slots::fill(std::uint32_t slot, std::uint32_t first,
                              std::span<const std::uint64_t> values) {
  if (slot >= slots_.size() || !slots_[slot].open ||
      first + values.size() > slots_[slot].values.size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("read reply for slot %u, values %u..%u, matches no outstanding read",
                        slot, first, first + values.size()));
  }
  slot_state& s = slots_[slot];
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (s.filled[first + i]) {
      return absl::InvalidArgumentError(
          absl::StrFormat("second reply for value %u of read slot %u", first + i, slot));
    }
    s.filled[first + i] = true;
    s.values[first + i] = values[i];
  }
  s.missing -= static_cast<std::uint32_t>(values.size());
  if (s.missing == 0) {
    --outstanding_;
    if (s.abandoned) free(slot);
  }
  return absl::OkStatus();
}

bool read_slots::ready(ticket t) const {
  ISO_DCHECK(t.slot < slots_.size() && slots_[t.slot].generation == t.generation);
  return slots_[t.slot].missing == 0;
}

std::span<const std::uint64_t> read_slots::values(ticket t) const {
  ISO_CHECK(t.slot < slots_.size() && slots_[t.slot].generation == t.generation &&
            slots_[t.slot].missing == 0)
      << "values of read slot " << t.slot << " taken before they arrived";
  return slots_[t.slot].values;
}

void read_slots::close(ticket t) {
  if (t.slot >= slots_.size() || slots_[t.slot].generation != t.generation) return;
  slot_state& s = slots_[t.slot];
  if (s.missing == 0) {
    free(t.slot);
  } else {
    s.abandoned = true;
  }
}

void read_slots::free(std::uint32_t slot) {
  slots_[slot].open = false;
  free_.push_back(slot);
}

}  // namespace iso::runtime
