#include "runtime/smm/isochron_builder.hpp"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "base/check.hpp"

namespace iso::runtime {
namespace {

const char* name_of(op_code code) {
  switch (code) {
    case op_code::read:
      return "read";
    case op_code::fetch_add:
      return "fetch_add";
    case op_code::exchange:
      return "exchange";
    case op_code::compare_exchange:
      return "compare_exchange";
    case op_code::write:
      return "write";
    case op_code::sched:
      return "sched";
    case op_code::assign:
      return "assign";
    case op_code::message:
    case op_code::queued:
      return "message";
    case op_code::signal:
      return "signal";
    case op_code::barrier:
      return "barrier";
  }
  return "operation";
}

}  // namespace

isochron_builder::isochron_builder(node_id self, std::uint32_t nodes, const page_table& pages,
                                   const builder_limits& limits)
    : self_(self),
      pages_(pages),
      streams_(nodes),
      is_touched_(nodes, false),
      distance_(nodes),
      limits_(limits),
      projected_(nodes, 0) {
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
  queued_to_self_ = 0;
  rank_ = rank;
  next_index_ = 0;
  bytes_ = 0;
  open_ = true;
}

void isochron_builder::project(node_id node, std::size_t bytes) {
  projected_bytes_ += bytes;
  if (projected_[node] == projection_) return;
  projected_[node] = projection_;
  if (streams_[node].empty()) projected_bytes_ += sizeof(stream_header);
  if (node != self_ && !is_touched_[node]) ++projected_parts_;
}

absl::Status isochron_builder::check_projection(const char* what) const {
  const std::size_t parts = touched_.size() + projected_parts_;
  if (parts == 0) return absl::OkStatus();  // purely local: runs here, needs no NIC record
  const std::size_t record = bytes_ + projected_bytes_ + kPartOverhead * parts;
  if (record <= limits_.record_bytes) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrFormat(
      "%s would make the isochron %u bytes, more than the NIC queue's limit of %u bytes for one "
      "isochron; end it and put the rest in another",
      what, record, limits_.record_bytes));
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
  // The last variable is address + count - 1: it must not wrap past 2^64-1 (an address
  // computed as `first - 1` lands there).
  if (count - 1 > ~std::uint64_t{0} - address) {
    return absl::OutOfRangeError(
        absl::StrFormat("%s of %u variables from address %u runs past the last address, 2^64-1",
                        name_of(code), count, address));
  }
  // Validate the whole range, and what it adds to the isochron, before adding anything.
  // Offsets, not end addresses: they cannot wrap.
  ++projection_;
  projected_bytes_ = 0;
  projected_parts_ = 0;
  const bool rmw = is_rmw(code);
  const std::size_t record_bytes = sizeof(op_header) + (code == op_code::read ? sizeof(read_body)
                                                        : rmw                 ? sizeof(rmw_body)
                                                                              : 0);
  // Operands per variable.
  const std::uint32_t per_variable = rmw ? rmw_operands(code)
                                     : code == op_code::write || code == op_code::assign ? 1
                                                                                         : 0;
  const bool carries_values = per_variable != 0;
  for (std::uint64_t done = 0; done < count;) {
    const std::uint64_t a = address + done;
    const page_info* page = pages_.lookup(a);
    if (page == nullptr || page->width != width) {
      return pages_.find(a, width).status();  // builds the message
    }
    const std::uint64_t page_end = (pages_.page_of(a) + 1) * pages_.page_variables();
    const std::uint64_t n = std::min<std::uint64_t>(count - done, page_end - a);
    const std::size_t bytes = record_bytes + n * per_variable * sizeof(std::uint64_t);
    if (code == op_code::read) {
      project(page->read_target, bytes);
    } else {
      for (node_id target : page->copyset) project(target, bytes);
    }
    done += n;
  }
  if (absl::Status s = check_projection(
          absl::StrFormat("a %s of %u variables at address %u", name_of(code), count, address)
              .c_str());
      !s.ok()) {
    return s;
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
      if (rmw) {
        const rmw_body body{target == page.read_target ? slot : rmw_body::kNoAnswer, done};
        s.append(&body, sizeof(body));
      }
      if (carries_values) {
        s.append(values.data() + std::size_t{done} * per_variable,
                 std::size_t{n} * per_variable * sizeof(std::uint64_t));
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
  bytes_ += projected_bytes_;
  ISO_DCHECK(bytes_ == total_bytes()) << "projected " << bytes_ << ", built " << total_bytes();
  return absl::OkStatus();
}

absl::Status isochron_builder::add_message(node_id to, op_code code, std::uint32_t handler,
                                           std::span<const std::byte> payload) {
  return add_message(std::span(&to, 1), code, handler, payload);
}

absl::Status isochron_builder::add_message(std::span<const node_id> to, op_code code,
                                           std::uint32_t handler,
                                           std::span<const std::byte> payload) {
  for (const node_id n : to) {
    if (n >= streams_.size()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("message to node %u: the job has nodes 0..%u", n, streams_.size() - 1));
    }
  }
  if (payload.size() > limits_.message_bytes || payload.size() > 0xffffffffu) {
    return absl::OutOfRangeError(
        absl::StrFormat("message of %u bytes to node %u exceeds the largest message, %u bytes",
                        payload.size(), to.empty() ? self_ : to.front(),
                        std::min<std::size_t>(limits_.message_bytes, 0xffffffffu)));
  }
  if (next_index_ == 0xffff) {
    return absl::ResourceExhaustedError("an isochron holds at most 65535 operations");
  }
  if (to.empty()) return absl::OkStatus();
  ++projection_;
  projected_bytes_ = 0;
  projected_parts_ = 0;
  const std::size_t padded = (payload.size() + 7) & ~std::size_t{7};
  for (const node_id n : to) project(n, sizeof(op_header) + padded);
  const std::string what =
      to.size() == 1
          ? absl::StrFormat("a message of %u bytes to node %u", payload.size(), to.front())
          : absl::StrFormat("a message of %u bytes to %u nodes", payload.size(), to.size());
  if (absl::Status s = check_projection(what.c_str()); !s.ok()) {
    return s;
  }
  bytes_ += projected_bytes_;
  reads_only_ = false;
  // One operation: the same index at every destination, as a write to a copyset.
  const std::uint16_t index = next_index_++;
  for (const node_id n : to) {
    if (n == self_ && code == op_code::queued) queued_to_self_ += payload.size();
    byte_buffer& s = stream_for(n);
    op_writer out(s);
    out.put(op_header{.code = code,
                      .width = 0,
                      .index = index,
                      .count = static_cast<std::uint32_t>(payload.size()),
                      .address = handler});
    out.put_bytes(payload);
  }
  return absl::OkStatus();
}

absl::Status isochron_builder::add_group(op_code code, std::uint32_t channel, std::uint8_t mode,
                                         std::uint64_t instance) {
  if (next_index_ == 0xffff) {
    return absl::ResourceExhaustedError("an isochron holds at most 65535 operations");
  }
  ++projection_;
  projected_bytes_ = 0;
  projected_parts_ = 0;
  const std::size_t bytes =
      sizeof(op_header) + (code == op_code::barrier ? sizeof(std::uint64_t) : 0);
  for (node_id n = 0; n < streams_.size(); ++n) project(n, bytes);
  if (absl::Status s = check_projection(name_of(code)); !s.ok()) return s;
  bytes_ += projected_bytes_;
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
