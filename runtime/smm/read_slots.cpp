#include "runtime/smm/read_slots.hpp"

#include <algorithm>

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
  // Slots are reused: most reads are of one value, so this usually resizes nothing.
  s.values.resize(count);
  s.filled.resize(count);
  std::fill(s.filled.begin(), s.filled.end(), std::uint8_t{0});
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
        absl::StrFormat("read reply for slot %u, values %u..%u, matches no outstanding read", slot,
                        first, first + values.size()));
  }
  slot_state& s = slots_[slot];
  // Checked before anything is stored: a rejected reply leaves the slot as it was.
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (s.filled[first + i]) {
      return absl::InvalidArgumentError(
          absl::StrFormat("second reply for value %u of read slot %u", first + i, slot));
    }
  }
  // An empty reply completes nothing: the slot was counted done when its last value came
  // (or never counted, for a read of no values).
  if (values.empty()) return absl::OkStatus();
  for (std::size_t i = 0; i < values.size(); ++i) {
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

void read_slots::fill_all(std::uint32_t slot, std::span<const std::uint64_t> values) {
  slot_state& s = slots_[slot];
  ISO_DCHECK(s.open && s.missing == s.values.size() && values.size() == s.values.size());
  std::copy(values.begin(), values.end(), s.values.begin());
  std::fill(s.filled.begin(), s.filled.end(), std::uint8_t{1});
  s.missing = 0;
  --outstanding_;
  if (s.abandoned) free(slot);
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
