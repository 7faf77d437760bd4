// Turns the operations of one isochron into per-destination operation streams (one per
// remote node, plus the local part), routing reads to the nearest copy and changes to the
// whole copyset, and computing the isochron's distance (the largest to any remote
// destination). Operations on a range that spans pages are split at page borders.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "runtime/smm/operations.hpp"
#include "runtime/smm/page_table.hpp"

namespace iso::runtime {

// How large an isochron may grow; checked as each operation is added, so that end() never
// has to drop an isochron for its size.
struct builder_limits {
  // An isochron with remote parts travels to the NIC as one record of at most this many
  // bytes: every stream, plus kPartOverhead per remote part.
  std::size_t record_bytes = ~std::size_t{0};
  // The largest message payload.
  std::size_t message_bytes = ~std::size_t{0};
};

class isochron_builder {
 public:
  // What a remote part costs in the NIC's record besides its stream.
  static constexpr std::size_t kPartOverhead = 64;

  isochron_builder(node_id self, std::uint32_t nodes, const page_table& pages,
                   const builder_limits& limits = {});

  void begin(std::uint64_t rank);
  [[nodiscard]] bool open() const { return open_; }
  // No operation added since begin().
  [[nodiscard]] bool empty() const { return next_index_ == 0; }

  // Checks the range first (OutOfRange: outside memory, or a range that wraps past 2^64-1;
  // InvalidArgument: wrong width; ResourceExhausted: more than 65535 operations, or an
  // isochron that would outgrow limits.record_bytes), so a rejected operation adds nothing.
  // `values` is empty for read and sched; for a read, `slot` names where results go.
  [[nodiscard]] absl::Status add(op_code code, std::uint8_t width, std::uint64_t address,
                                 std::uint32_t count, std::span<const std::uint64_t> values,
                                 std::uint32_t slot);
  // A message (op_code::message for a handler, op_code::queued for the receive queue).
  // OutOfRange: a payload above limits.message_bytes; ResourceExhausted as for add().
  [[nodiscard]] absl::Status add_message(node_id to, op_code code, std::uint32_t handler,
                                         std::span<const std::byte> payload);
  // The same message to each node of `to` (distinct), as one operation: all of it or, on
  // an error, nothing.
  [[nodiscard]] absl::Status add_message(std::span<const node_id> to, op_code code,
                                         std::uint32_t handler, std::span<const std::byte> payload);
  // A signal or barrier arrival on `channel`, to every node (this one included).
  [[nodiscard]] absl::Status add_group(op_code code, std::uint32_t channel, std::uint8_t mode,
                                       std::uint64_t instance);

  // The streams, valid until the next begin().
  [[nodiscard]] const std::vector<node_id>& remote_destinations() const { return touched_; }
  [[nodiscard]] std::span<const std::byte> stream(node_id node) const {
    return streams_[node].bytes();
  }
  [[nodiscard]] bool has_local_part() const { return local_ops_ != 0; }
  // Every operation added since begin() is a read (true for an empty isochron).
  [[nodiscard]] bool reads_only() const { return reads_only_; }
  // Payload bytes of the messages for this node's own isotach receive queue (flow control:
  // they wait there until the application takes them).
  [[nodiscard]] std::size_t queued_to_self() const { return queued_to_self_; }
  [[nodiscard]] std::uint32_t delta() const { return delta_; }
  [[nodiscard]] std::uint64_t rank() const { return rank_; }
  [[nodiscard]] std::size_t total_bytes() const;
  void close() { open_ = false; }

 private:
  byte_buffer& stream_for(node_id node);
  // Counts what adding `bytes` to `node`'s stream costs the record (its stream header if
  // the stream is new, and a remote part's overhead), once per node per operation.
  void project(node_id node, std::size_t bytes);
  // ResourceExhausted when the projected growth would make the record too large.
  [[nodiscard]] absl::Status check_projection(const char* what) const;

  node_id self_;
  const page_table& pages_;
  std::vector<byte_buffer> streams_;  // by node; self's is the local part
  std::vector<node_id> touched_;      // remote nodes with a stream, ascending
  std::vector<bool> is_touched_;
  std::vector<std::uint32_t> distance_;  // logical distance to each node, looked up per isochron
  bool reads_only_ = true;
  std::uint64_t local_ops_ = 0;
  std::uint32_t delta_ = 0;
  std::uint64_t rank_ = 0;
  std::uint16_t next_index_ = 0;
  bool open_ = false;
  // Size limits (after the members every operation uses, which keep their places).
  builder_limits limits_;
  std::size_t bytes_ = 0;  // every stream's bytes so far
  std::size_t queued_to_self_ = 0;
  // The operation being checked: bytes it adds, remote parts it opens, and which nodes it
  // touches (projected_[n] == projection_ when counted for this operation).
  std::size_t projected_bytes_ = 0;
  std::size_t projected_parts_ = 0;
  std::uint64_t projection_ = 0;
  std::vector<std::uint64_t> projected_;
};

}  // namespace iso::runtime
