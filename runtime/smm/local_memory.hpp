// This node's copies of isotach pages and the execution of operation streams on them
// (Regehr, section 3.2.6; Ironman design, section 3.4):
//   read    substantiated: the value goes back to the reader; unsubstantiated: the read
//           waits in the pending-read table for the matching assign
//   write   sets the value (a sched and an assign in one step)
//   sched   marks the variable unsubstantiated, version = the issuing node
//   assign  from the node whose sched is still the latest post: sets the value; in any case
//           completes the reads that wait for that node's version
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "runtime/smm/copy_window.hpp"
#include "runtime/smm/operations.hpp"
#include "runtime/smm/page_table.hpp"

namespace iso::runtime {

// Where an operation sits in the global order: (pulse, step, pid, rank). A purely local
// isochron that ran between pulses sits after every node's operations of `pulse` (its pid
// is the node count + its node's), ordered by `step` first (order_point.hpp); an operation
// of the pulse has step 0.
struct exec_position {
  std::uint64_t pulse = 0;
  std::uint64_t step = 0;
  std::uint32_t pid = 0;
  std::uint64_t rank = 0;
};

// What executing operations does outside memory.
class execution_sink {
 public:
  virtual ~execution_sink() = default;
  // Values for slot `slot` of `reader`, starting at `first`.
  virtual void read_result(node_id reader, std::uint32_t slot, std::uint32_t first,
                           std::span<const std::uint64_t> values) = 0;
  // An isochronous message for handler `handler`.
  [[nodiscard]] virtual absl::Status run_handler(node_id source, std::uint32_t handler,
                                                 std::span<const std::byte> payload) = 0;
  // A message for the receive queue, a signal or a barrier arrival (`instance`).
  [[nodiscard]] virtual absl::Status group_op(node_id source, const op_header& op,
                                              std::span<const std::byte> payload,
                                              std::uint64_t instance) = 0;
  // One executed operation on one variable, for the history (only when tracing).
  virtual void executed(const exec_position& at, std::uint32_t op_index, op_code code,
                        std::uint64_t address, std::uint64_t value) = 0;
  // A read-modify-write on one variable: it read `old` and stored `stored` (only when
  // tracing).
  virtual void executed_rmw(const exec_position& at, std::uint32_t op_index, op_code code,
                            std::uint64_t address, std::uint64_t old, std::uint64_t stored) {
    (void)stored;
    executed(at, op_index, code, address, old);
  }
  [[nodiscard]] virtual bool tracing() const = 0;
};

// How an execution treats a stream's plain writes (op_code::write). Relaxed mode
// (smm_options::relaxed) applies them twice: on arrival, alone (`early`), and again with
// the rest of their isochron at its logical time (`again`: recorded in the history only the
// first time), so that every copy ends each pulse as isotach would have left it.
enum class write_pass : std::uint8_t { normal, early, again };

class local_memory {
 public:
  // Pages whose local index fits `window` live there; the rest on the heap.
  local_memory(const page_table& pages, copy_window& window);

  // Makes room for pages allocated since the last call.
  void grow();

  // Executes one stream from `source` at position `at`. InvalidArgument names the source
  // and the operation when the stream is malformed or names a variable this node holds no
  // copy of (the stream is input from another process).
  // `pass`: early runs the plain writes alone.
  [[nodiscard]] absl::Status execute(node_id source, const exec_position& at,
                                     std::span<const std::byte> operations, execution_sink& sink,
                                     write_pass pass = write_pass::normal);

  [[nodiscard]] std::size_t pending_reads() const { return pending_.size(); }
  // Whether `reader`'s read into `slot` waits here for the assign of version `version` (a
  // sched of node version - 1) to `address`.
  [[nodiscard]] bool read_waits(std::uint64_t address, std::uint32_t version, node_id reader,
                                std::uint32_t slot) const;
  // Addresses with reads waiting here for an assign of version `version`, and the reader of
  // the first such read of each.
  [[nodiscard]] std::vector<std::pair<std::uint64_t, node_id>> waiting_for(
      std::uint32_t version) const;

  // This node's copy of `address` onwards (the page must be held here), for reads by its
  // owner.
  [[nodiscard]] const shared_variable* copy_of(const page_info& page, std::uint64_t address) const {
    return copies_[page.local_index] + pages_.offset_in_page(address);
  }

 private:
  using variable = shared_variable;
  // A read, or a read-modify-write, of a variable that waits for its assign.
  struct pending_read {
    node_id reader;
    std::uint32_t slot;  // rmw_body::kNoAnswer: a copy that does not answer
    std::uint32_t index;
    exec_position at;  // where the read sits in the order (it returns the sched's value)
    std::uint32_t op_index;
    op_code code = op_code::read;
    std::uint8_t width = 8;
    std::uint64_t a = 0;  // a read-modify-write's operands
    std::uint64_t b = 0;
  };
  // Executes the read-modify-writes of one record on `vars`.
  [[nodiscard]] absl::Status execute_rmw(node_id source, const exec_position& at,
                                         const op_header& op, variable* vars, op_reader& in,
                                         execution_sink& sink);

  // Whether write_pass::early leaves out the operation `op`, whose header `in` has just
  // read; if so, `in` is moved past its body (`truncated` when it could not be).
  [[nodiscard]] static bool passed_over_early(const op_header& op, op_reader& in, bool& truncated);

  [[nodiscard]] absl::StatusOr<variable*> locate(node_id source, std::uint64_t address,
                                                 std::uint8_t width);

  const page_table& pages_;
  copy_window& window_;
  std::vector<variable*> copies_;                 // by local page index
  std::deque<std::vector<variable>> heap_pages_;  // those that did not fit the window
  // (address, version) -> reads and read-modify-writes waiting for that version's assign;
  // ordered so that they complete in the order they executed.
  std::multimap<std::pair<std::uint64_t, std::uint32_t>, pending_read> pending_;
  std::vector<std::uint64_t> scratch_;
};

}  // namespace iso::runtime
