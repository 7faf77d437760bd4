// The objects order as a test plays it: a test puts an ordered message straight into a
// node's inbox of the order, when it chooses (as the order would deliver it), so that one
// node applies a creation, a migration or a switch to replicas late whatever the timing.
// Nothing goes through the real order.
//
//   iso::test::played_order played(node);               // every node, before any object
//   played.deliver(iso::test::creation(iso::object_placement::single_copy, 1, order));
//   iso::object x = iso::object::attach(node, iso::test::kFirstOrdered);
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "iso/iso.hpp"
#include "iso/object.hpp"
#include "runtime/node_state.hpp"
#include "runtime/objects/object_table.hpp"
#include "runtime/objects/object_wire.hpp"
#include "tests/support/object_types.hpp"

namespace iso::test {

// The objects order on one node: the inbox the node's object table applies from. Every node
// must make one (at the same point, before its first object), as its group id is the next
// one after the id this takes. It registers `type` (Int unless told), which builds the table.
class played_order {
 public:
  explicit played_order(iso::node& node, const iso::object_type& type = make_int_type())
      : node_(node), group_(iso::detail::node_state::of(node).next_group_id() + 1) {
    iso::register_object_type(node, type);
  }

  // Delivers `message` from `sender` here; applied by the node's next round.
  void deliver(std::vector<std::byte> message, iso::node_id sender = 0) {
    iso::detail::node_state& state = iso::detail::node_state::of(node_);
    std::deque<iso::runtime::ordered_delivery>& inbox =
        state.objects().order() == iso::order_kind::isotach ? state.isotach_ordered().inbox(group_)
                                                            : state.sequenced().inbox(group_);
    inbox.push_back({.sender = sender, .bytes = std::move(message)});
  }

 private:
  iso::node& node_;
  std::uint32_t group_;
};

// The first object created through the order.
inline constexpr iso::object_id kFirstOrdered = iso::runtime::object_table::kOrderedIds;

// A creation through the order of an object of type `type_name` (Int: value 0).
inline std::vector<std::byte> creation(iso::object_placement placement, iso::node_id owner,
                                       iso::order_kind order,
                                       const std::string& type_name = "Int") {
  namespace wire = iso::runtime::objects_wire;
  const wire::create_header c{.placement = static_cast<std::uint8_t>(placement),
                              .order = static_cast<std::uint8_t>(order),
                              .owner = owner,
                              .name_length = static_cast<std::uint32_t>(type_name.size())};
  return wire::frame(wire::write_header{.object = 0, .op = wire::kCreateOp},
                     wire::frame(c, std::as_bytes(std::span(type_name))));
}

// A migration of `id` to node `to`.
inline std::vector<std::byte> migration(iso::object_id id, iso::node_id to) {
  namespace wire = iso::runtime::objects_wire;
  const auto target = static_cast<std::uint32_t>(to);
  return wire::frame(wire::write_header{.object = id, .op = wire::kMigrateOp},
                     std::as_bytes(std::span(&target, 1)));
}

// Automatic placement: `id` becomes replicated.
inline std::vector<std::byte> replication(iso::object_id id) {
  namespace wire = iso::runtime::objects_wire;
  return wire::frame(wire::write_header{.object = id, .op = wire::kReplicateOp}, {});
}

// A write of Int's inc(by) through the order (from its sender).
inline std::vector<std::byte> increment(iso::object_id id, std::int64_t by) {
  namespace wire = iso::runtime::objects_wire;
  return wire::frame(wire::write_header{.object = id, .op = int_ops::kInc},
                     std::as_bytes(std::span(&by, 1)));
}

}  // namespace iso::test
