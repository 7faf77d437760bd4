#include "tools/isorun/output_tagger.hpp"

#include "absl/strings/str_format.h"
#include "tools/isorun/posix_io.hpp"

namespace iso::isorun {

output_tagger::output_tagger(int node, int out_fd)
    : prefix_(absl::StrFormat("[%d] ", node)), out_fd_(out_fd) {}

void output_tagger::feed(std::string_view bytes) {
  while (!bytes.empty()) {
    const std::size_t newline = bytes.find('\n');
    if (newline == std::string_view::npos) {
      partial_.append(bytes);
      while (partial_.size() >= kMaxLine) {
        emit(std::string_view(partial_).substr(0, kMaxLine));
        partial_.erase(0, kMaxLine);
      }
      return;
    }
    if (partial_.empty()) {
      emit(bytes.substr(0, newline));
    } else {
      partial_.append(bytes.substr(0, newline));
      emit(partial_);
      partial_.clear();
    }
    bytes.remove_prefix(newline + 1);
  }
}

void output_tagger::finish() {
  if (partial_.empty()) return;
  emit(partial_);
  partial_.clear();
}

void output_tagger::emit(std::string_view line) {
  if (broken_) return;
  scratch_.assign(prefix_);
  scratch_.append(line);
  scratch_.push_back('\n');
  if (!write_all(out_fd_, scratch_)) broken_ = true;
}

}  // namespace iso::isorun
