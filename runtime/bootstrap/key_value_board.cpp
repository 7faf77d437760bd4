#include "runtime/bootstrap/key_value_board.hpp"

#include <cstdint>
#include <cstring>
#include <optional>

#include "absl/strings/str_format.h"

namespace iso::runtime {
namespace {
constexpr std::size_t kRecordHeader = 2 * sizeof(std::uint32_t);
}

absl::Status key_value_board::put(std::string_view key, std::string_view value) {
  if (key.empty()) return absl::InvalidArgumentError("bootstrap keys must not be empty");
  const std::size_t need = kRecordHeader + key.size() + value.size() + sizeof(std::uint32_t);
  if (used_ + need > area_.size()) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("bootstrap board full: %u of %u bytes used, key '%s' needs %u", used_,
                        area_.size(), key, need));
  }
  const std::uint32_t lengths[2] = {static_cast<std::uint32_t>(key.size()),
                                    static_cast<std::uint32_t>(value.size())};
  std::byte* out = area_.data() + used_;
  std::memcpy(out + kRecordHeader, key.data(), key.size());
  if (!value.empty()) std::memcpy(out + kRecordHeader + key.size(), value.data(), value.size());
  const std::uint32_t end = 0;
  std::memcpy(out + kRecordHeader + key.size() + value.size(), &end, sizeof(end));
  std::memcpy(out, lengths, sizeof(lengths));  // last: the record exists once its length does
  used_ += kRecordHeader + key.size() + value.size();
  return absl::OkStatus();
}

absl::StatusOr<std::string> key_value_board::find(std::span<const std::byte> area,
                                                  std::string_view key) {
  std::optional<std::string> found;
  std::size_t at = 0;
  while (at + kRecordHeader <= area.size()) {
    std::uint32_t lengths[2];
    std::memcpy(lengths, area.data() + at, sizeof(lengths));
    if (lengths[0] == 0) break;
    const std::size_t record = kRecordHeader + lengths[0] + std::size_t{lengths[1]};
    if (at + record > area.size()) return absl::DataLossError("bootstrap board is corrupt");
    const auto* text = reinterpret_cast<const char*>(area.data() + at + kRecordHeader);
    if (std::string_view(text, lengths[0]) == key) found.emplace(text + lengths[0], lengths[1]);
    at += record;
  }
  if (!found) return absl::NotFoundError(absl::StrFormat("no bootstrap key '%s'", key));
  return *std::move(found);
}

}  // namespace iso::runtime
