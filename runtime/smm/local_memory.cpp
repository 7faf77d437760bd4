#include "runtime/smm/local_memory.hpp"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace iso::runtime {
namespace {

std::uint64_t truncate(std::uint64_t value, std::uint8_t width) {
  return width == 4 ? (value & 0xffffffffu) : value;
}

absl::Status malformed(node_id source, const char* what) {
  return absl::InvalidArgumentError(
      absl::StrFormat("malformed operation stream from node %u: %s", source, what));
}

}  // namespace

local_memory::local_memory(const page_table& pages, copy_window& window)
    : pages_(pages), window_(window) {}

void local_memory::grow() {
  while (copies_.size() < pages_.local_pages()) {
    const auto index = static_cast<std::uint32_t>(copies_.size());
    if (index < window_.capacity()) {
      copies_.push_back(window_.page(index));  // zero-filled, as a fresh page must be
    } else {
      copies_.push_back(heap_pages_.emplace_back(pages_.page_variables()).data());
    }
  }
}

absl::StatusOr<local_memory::variable*> local_memory::locate(node_id source, std::uint64_t address,
                                                             std::uint8_t width) {
  const page_info* page = pages_.lookup(address);
  if (page == nullptr) {
    // Input from another process, like any bad address: InvalidArgument naming the sender.
    return absl::InvalidArgumentError(absl::StrFormat(
        "node %u sent an operation on address %u, outside isotach memory "
        "(%u variables allocated)",
        source, address, pages_.pages().size() * std::uint64_t{pages_.page_variables()}));
  }
  const page_info& info = *page;
  if (!info.local()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("node %u sent an operation on address %u, of which this node holds no copy",
                        source, address));
  }
  if (info.width != width) {
    return absl::InvalidArgumentError(
        absl::StrFormat("node %u sent a %u-byte operation on address %u, a %u-byte variable",
                        source, width, address, info.width));
  }
  return &copies_[info.local_index][pages_.offset_in_page(address)];
}

bool local_memory::passed_over_early(const op_header& op, op_reader& in, bool& truncated) {
  if (op.code == op_code::write) return false;
  // Moves past the body without looking at it: the pass at logical time checks it.
  std::size_t bytes = 0;
  switch (op.code) {
    case op_code::message:
    case op_code::queued:
      bytes = op.count;
      break;
    case op_code::barrier:
      bytes = sizeof(std::uint64_t);
      break;
    case op_code::read:
      bytes = sizeof(read_body);
      break;
    case op_code::fetch_add:
    case op_code::exchange:
    case op_code::compare_exchange:
      bytes = sizeof(rmw_body) +
              std::size_t{op.count} * (op.code == op_code::compare_exchange ? 16 : 8);
      break;
    case op_code::write:
    case op_code::assign:
      bytes = std::size_t{op.count} * 8;
      break;
    default:  // signal, sched: no body; an unknown code is the other pass's error
      break;
  }
  std::span<const std::byte> body;
  truncated = !in.get_bytes(bytes, body);
  return true;
}

absl::Status local_memory::execute(node_id source, const exec_position& at,
                                   std::span<const std::byte> operations, execution_sink& sink,
                                   write_pass pass) {
  op_reader in(operations);
  const bool tracing = sink.tracing();
  while (!in.done()) {
    op_header op;
    if (!in.get(op)) return malformed(source, "truncated header");
    if (pass == write_pass::early) [[unlikely]] {
      bool truncated = false;
      if (passed_over_early(op, in, truncated)) {
        if (truncated) return malformed(source, "truncated operation");
        continue;
      }
    }
    const std::uint32_t op_index = op.index;
    if (op.code == op_code::message) {
      std::span<const std::byte> payload;
      if (!in.get_bytes(op.count, payload)) return malformed(source, "truncated message");
      if (absl::Status s =
              sink.run_handler(source, static_cast<std::uint32_t>(op.address), payload);
          !s.ok()) {
        return s;
      }
      continue;
    }
    if (op.code == op_code::queued || op.code == op_code::signal || op.code == op_code::barrier) {
      std::span<const std::byte> payload;
      std::uint64_t instance = 0;
      if (op.code == op_code::queued && !in.get_bytes(op.count, payload)) {
        return malformed(source, "truncated message");
      }
      if (op.code == op_code::barrier && !in.get(instance)) {
        return malformed(source, "truncated barrier arrival");
      }
      if (absl::Status s = sink.group_op(source, op, payload, instance); !s.ok()) return s;
      continue;
    }
    if (op.count == 0 || op.count > pages_.page_variables() ||
        pages_.page_of(op.address) != pages_.page_of(op.address + op.count - 1)) {
      return malformed(source, "operation count does not fit one page");
    }
    absl::StatusOr<variable*> first = locate(source, op.address, op.width);
    if (!first.ok()) return first.status();
    variable* vars = *first;
    if (op.code != op_code::read) window_.begin_change();
    switch (op.code) {
      case op_code::read: {
        read_body body;
        if (!in.get(body)) return malformed(source, "truncated read");
        scratch_.clear();
        std::uint32_t run_start = 0;
        // Substantiated values go back in runs; a variable awaiting its assign waits.
        auto flush = [&](std::uint32_t end) {
          if (end > run_start) {
            sink.read_result(source, body.slot, body.first + run_start,
                             std::span(scratch_).subspan(0, end - run_start));
          }
          scratch_.clear();
          run_start = end + 1;
        };
        for (std::uint32_t i = 0; i < op.count; ++i) {
          variable& v = vars[i];
          if (v.sched_by != 0) {
            flush(i);
            pending_.emplace(std::make_pair(op.address + i, v.sched_by),
                             pending_read{source, body.slot, body.first + i, at, op_index});
          } else {
            scratch_.push_back(v.value);
            if (tracing) sink.executed(at, op_index, op.code, op.address + i, v.value);
          }
        }
        flush(op.count);
        break;
      }
      case op_code::fetch_add:
      case op_code::exchange:
      case op_code::compare_exchange:
        if (absl::Status s = execute_rmw(source, at, op, vars, in, sink); !s.ok()) return s;
        break;
      case op_code::write:
      case op_code::assign: {
        for (std::uint32_t i = 0; i < op.count; ++i) {
          std::uint64_t value;
          if (!in.get(value)) return malformed(source, "truncated values");
          value = truncate(value, op.width);
          variable& v = vars[i];
          if (op.code == op_code::write) {
            store_value(v, value);
            store_sched(v, 0);
            if (tracing && pass != write_pass::again) {
              sink.executed(at, op_index, op.code, op.address + i, value);
            }
            continue;
          }
          const std::uint32_t version = source + 1;
          if (tracing) sink.executed(at, op_index, op.code, op.address + i, value);
          // What waited for this value, in the order it executed: reads see it, and each
          // read-modify-write changes it for those after it.
          std::uint64_t current = value;
          auto [begin, end] = pending_.equal_range({op.address + i, version});
          for (auto it = begin; it != end; ++it) {
            const std::uint64_t old = current;
            const pending_read& r = it->second;
            if (r.code == op_code::read) {
              if (tracing) sink.executed(r.at, r.op_index, op_code::read, op.address + i, old);
            } else {
              current = rmw_apply(r.code, r.width, old, r.a, r.b);
              if (tracing) {
                sink.executed_rmw(r.at, r.op_index, r.code, op.address + i, old, current);
              }
            }
            if (r.slot != rmw_body::kNoAnswer) {
              sink.read_result(r.reader, r.slot, r.index, std::span(&old, 1));
            }
          }
          pending_.erase(begin, end);
          // Unless a later write or sched took the variable over meanwhile.
          if (v.sched_by == version) {
            store_value(v, current);
            store_sched(v, 0);
          }
        }
        break;
      }
      case op_code::sched:
        for (std::uint32_t i = 0; i < op.count; ++i) {
          store_sched(vars[i], source + 1);
          if (tracing) sink.executed(at, op_index, op.code, op.address + i, 0);
        }
        break;
      default:
        return malformed(source, "unknown operation code");
    }
  }
  return absl::OkStatus();
}

absl::Status local_memory::execute_rmw(node_id source, const exec_position& at, const op_header& op,
                                       variable* vars, op_reader& in, execution_sink& sink) {
  rmw_body body;
  if (!in.get(body)) return malformed(source, "truncated read-modify-write");
  for (std::uint32_t i = 0; i < op.count; ++i) {
    std::uint64_t a = 0;
    std::uint64_t b = 0;
    if (!in.get(a) || (op.code == op_code::compare_exchange && !in.get(b))) {
      return malformed(source, "truncated read-modify-write operands");
    }
    const std::uint32_t index = body.first + i;
    variable& v = vars[i];
    if (v.sched_by != 0) {
      // Like a read: it waits for the assign, and then applies to the assigned value.
      pending_.emplace(
          std::make_pair(op.address + i, v.sched_by),
          pending_read{source, body.slot, index, at, op.index, op.code, op.width, a, b});
      continue;
    }
    const std::uint64_t old = v.value;
    const std::uint64_t stored = rmw_apply(op.code, op.width, old, a, b);
    store_value(v, stored);
    if (sink.tracing()) sink.executed_rmw(at, op.index, op.code, op.address + i, old, stored);
    if (body.slot != rmw_body::kNoAnswer) {
      sink.read_result(source, body.slot, index, std::span(&old, 1));
    }
  }
  return absl::OkStatus();
}

bool local_memory::read_waits(std::uint64_t address, std::uint32_t version, node_id reader,
                              std::uint32_t slot) const {
  auto [begin, end] = pending_.equal_range({address, version});
  return std::any_of(begin, end, [&](const auto& entry) {
    return entry.second.reader == reader && entry.second.slot == slot;
  });
}

std::vector<std::pair<std::uint64_t, node_id>> local_memory::waiting_for(
    std::uint32_t version) const {
  std::vector<std::pair<std::uint64_t, node_id>> out;
  for (const auto& [key, read] : pending_) {
    if (key.second != version || read.slot == rmw_body::kNoAnswer) continue;
    if (out.empty() || out.back().first != key.first) out.emplace_back(key.first, read.reader);
  }
  return out;
}

}  // namespace iso::runtime
