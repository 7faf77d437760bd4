#include "runtime/smm/isochron_builder.hpp"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace iso::runtime {

isochron_builder::isochron_builder(node_id self, std::uint32_t nodes, const page_table& pages)
    : self_(self), pages_(pages), streams_(nodes), is_touched_(nodes, false), distance_(nodes) {
  for (node_id n = 0; n < nodes; ++n) distance_[n] = n == self ? 0 : pages.distance_to(n);
}

void isochron_builder::begin(std::uint64_t rank) {
  for (node_id n : touched_) {
    streams_[n].clear();
    is_touched_[n] = false;
  }
  touched_.clear();
  streams_[self_].clear();
  local_ops_ = 0;
  delta_ = 0;
  reads_only_ = true;
  rank_ = rank;
  next_index_ = 0;
  open_ = true;
}

byte_buffer& isochron_builder::stream_for(node_id node) {
  byte_buffer& s = streams_[node];
  if (node == self_) {
    ++local_ops_;
  } else if (!is_touched_[node]) {
    is_touched_[node] = true;
    touched_.insert(std::upper_bound(touched_.begin(), touched_.end(), node), node);
    delta_ = std::max(delta_, distance_[node]);
  }
  if (s.empty()) op_writer(s).put(stream_header{rank_});
  return s;
}

absl::Status isochron_builder::add(op_code code, std::uint8_t width, std::uint64_t address,
                                   std::uint32_t count, std::span<const std::uint64_t> values,
                                   std::uint32_t slot) {
  if (count == 0) return absl::InvalidArgumentError("an operation needs at least one variable");
  if (next_index_ == 0xffff) {
    return absl::ResourceExhaustedError("an isochron holds at most 65535 operations");
  }
  // Validate the whole range before adding anything.
  for (std::uint64_t a = address; a < address + count;) {
    const page_info* page = pages_.lookup(a);
    if (page == nullptr) return pages_.find(a).status();  // builds the message
    if (page->width != width) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "address %u holds %u-bit variables, not %u-bit", a, page->width * 8, width * 8));
    }
    a = (pages_.page_of(a) + 1) * pages_.page_variables();
  }
  if (code != op_code::read) reads_only_ = false;
  std::uint32_t done = 0;
  while (done < count) {
    const std::uint64_t a = address + done;
    const page_info& page = *pages_.lookup(a);
    const std::uint64_t page_end = (pages_.page_of(a) + 1) * pages_.page_variables();
    const std::uint32_t n =
        static_cast<std::uint32_t>(std::min<std::uint64_t>(count - done, page_end - a));
    const op_header header{
        .code = code, .width = width, .index = next_index_, .count = n, .address = a};
    auto emit = [&](node_id target) {
      byte_buffer& s = stream_for(target);
      s.append(&header, sizeof(header));
      if (code == op_code::read) {
        const read_body body{slot, done};
        s.append(&body, sizeof(body));
      }
      if (code == op_code::write || code == op_code::assign) {
        s.append(values.data() + done, std::size_t{n} * sizeof(std::uint64_t));
      }
    };
    if (code == op_code::read) {
      emit(page.read_target);
    } else {
      for (node_id target : page.copyset) emit(target);
    }
    done += n;
  }
  ++next_index_;
  return absl::OkStatus();
}

absl::Status isochron_builder::add_message(node_id to, op_code code, std::uint32_t handler,
                                           std::span<const std::byte> payload) {
  if (to >= streams_.size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("message to node %u: the job has nodes 0..%u", to, streams_.size() - 1));
  }
  if (payload.size() > 0xffffffffu) {
    return absl::OutOfRangeError("an isochronous message holds at most 4 GiB");
  }
  if (next_index_ == 0xffff) {
    return absl::ResourceExhaustedError("an isochron holds at most 65535 operations");
  }
  reads_only_ = false;
  byte_buffer& s = stream_for(to);
  op_writer out(s);
  out.put(op_header{.code = code,
                    .width = 0,
                    .index = next_index_++,
                    .count = static_cast<std::uint32_t>(payload.size()),
                    .address = handler});
  out.put_bytes(payload);
  return absl::OkStatus();
}

absl::Status isochron_builder::add_group(op_code code, std::uint32_t channel, std::uint8_t mode,
                                         std::uint64_t instance) {
  if (next_index_ == 0xffff) {
    return absl::ResourceExhaustedError("an isochron holds at most 65535 operations");
  }
  const op_header header{
      .code = code, .width = mode, .index = next_index_++, .count = 0, .address = channel};
  reads_only_ = false;
  for (node_id n = 0; n < streams_.size(); ++n) {
    op_writer out(stream_for(n));
    out.put(header);
    if (code == op_code::barrier) out.put(instance);
  }
  return absl::OkStatus();
}

std::size_t isochron_builder::total_bytes() const {
  std::size_t total = streams_[self_].size();
  for (node_id n : touched_) total += streams_[n].size();
  return total;
}

}  // namespace iso::runtime
