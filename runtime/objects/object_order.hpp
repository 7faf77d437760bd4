// The total order of the objects' messages (replicated writes, creations by one node,
// migrations): one group of every node of the job, in either order of
// iso/ordered_group.hpp. The object table sees only this seam.
//
//   std::unique_ptr<object_order> order =
//       make_object_order(order_kind::isotach, state.sequenced(), state.isotach_ordered(),
//                         group, nodes);
//   ISO_RETURN_IF_ERROR(order->send(batch));        // a message of its own
//   ISO_RETURN_IF_ERROR(order->add(batch));         // isotach: into the open isochron
//   for (ordered_delivery& d : order->inbox()) ...  // every node: one order
//
// One thread uses it (the node's application thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>

#include "absl/status/status.h"
#include "iso/options.hpp"
#include "runtime/ordered/batch_framing.hpp"
#include "runtime/ordered/isotach_groups.hpp"
#include "runtime/ordered/sequencer_groups.hpp"

namespace iso::runtime {

class object_order {
 public:
  object_order() = default;
  object_order(const object_order&) = delete;
  object_order& operator=(const object_order&) = delete;
  virtual ~object_order() = default;

  [[nodiscard]] virtual order_kind kind() const = 0;
  // The largest batch send() and add() take.
  [[nodiscard]] virtual std::size_t max_batch() const = 0;
  // Puts `batch` (framed messages) into the order by itself; may wait for flow control.
  [[nodiscard]] virtual absl::Status send(std::span<const std::byte> batch) = 0;
  // Adds `batch` to this node's open isochron, so that it takes effect at the isochron's
  // logical time with everything else in it. Isotach only (FailedPrecondition for the
  // sequencer order, which runs outside logical time); ResourceExhausted when the isochron
  // would outgrow the NIC's record. Nothing is added on error.
  [[nodiscard]] virtual absl::Status add(std::span<const std::byte> batch) = 0;
  // What arrived, in the order, not yet taken.
  [[nodiscard]] virtual std::deque<ordered_delivery>& inbox() = 0;
};

// Opens `group` with every one of the job's `nodes` nodes as members in the chosen order.
[[nodiscard]] std::unique_ptr<object_order> make_object_order(order_kind kind,
                                                              sequencer_groups& sequenced,
                                                              isotach_groups& isotach,
                                                              std::uint32_t group,
                                                              std::uint32_t nodes);

// "sequencer" or "isotach".
[[nodiscard]] const char* order_name(order_kind kind);

}  // namespace iso::runtime
