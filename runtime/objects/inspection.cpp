// Reading a state in place (iso::object::inspect): where this node holds the state, at the
// point of the order a read operation would run, with the node kept from progress meanwhile.
//
// Why the state cannot change while the caller's function runs: every change to a state
// happens on the node's thread, either inside an event-loop round (writes the objects order
// delivered, requests served for a copy owned here, copies installed or shipped) or inside
// this table's own call paths (start() runs a call on a copy owned here). Progress is
// forbidden during an inspection, so no round runs (a wait or poll is refused by the event
// loop, and a fiber switch happens only in a wait or a yield, both rounds), and every call
// path of the API that could reach start() passes refuse_inside_inspection() first. The
// NIC's own thread never touches a state: it only queues deliveries for the next round.
#include <string>

#include "absl/strings/str_format.h"
#include "runtime/objects/object_table.hpp"
#include "runtime/objects/type_name.hpp"

namespace iso::runtime {

absl::StatusOr<const void*> object_table::begin_inspection(object_id id,
                                                           const std::type_info& want) {
  absl::StatusOr<entry*> found = find(id, "inspect");
  if (!found.ok()) return found.status();
  entry& e = **found;
  const std::string what =
      absl::StrFormat("inspect<%s> on %s", readable_type_name(want), describe(e.id, e.type->name));
  const std::type_info* have = e.type->state.type;
  if (have == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the type's state functions do not say what C++ type its state is (build it with "
        "typed_object, or set state_functions::type)",
        what));
  }
  if (*have != want) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: its state is a %s, not a %s", what,
                                                      readable_type_name(*have),
                                                      readable_type_name(want)));
  }
  const bool nested = inspecting();
  if (!nested && loop_.progress_forbidden()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s inside %s: the state may be in the middle of a change there", what,
                        loop_.forbidden_inside()));
  }
  for (;;) {
    const bool replicated = e.where == object_placement::replicated;
    if (!replicated && e.owner != self_) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "%s: node %u keeps no copy; the single copy is on node %u (read it with an "
          "operation, or migrate it here)",
          what, self_, e.owner));
    }
    if (!e.state) {
      // A replica or a copy on its way here, as a call would wait for it; not inside
      // another inspection, whose function holds a state that a wait could change.
      if (nested) {
        return absl::FailedPreconditionError(absl::StrFormat(
            "%s inside the inspection of object %u: its %s is still on its way to node %u, "
            "and an inspection cannot wait inside another",
            what, inspected_, replicated ? "replica" : "copy", self_));
      }
      if (absl::Status s = wait_for_state(e, what); !s.ok()) return s;
      continue;
    }
    // As a read operation: writes already delivered here (under the isotach order, of a
    // logical time this node has passed) are applied first. That may move the state.
    if (!nested && apply_delivered()) continue;
    break;
  }
  if (!nested) {
    inspected_ = id;
    loop_.forbid_progress("object::inspect's function");
  }
  ++inspections_;
  return static_cast<const void*>(e.state.get());
}

void object_table::end_inspection() {
  if (inspections_ == 0) return;
  // The outermost one started where progress was allowed (it refuses to start otherwise).
  if (--inspections_ == 0) loop_.forbid_progress(nullptr);
}

absl::Status object_table::refuse_inside_inspection(const char* what) const {
  if (!inspecting()) return absl::OkStatus();
  const auto it = objects_.find(inspected_);
  const std::string object = it == objects_.end() ? absl::StrFormat("object %u", inspected_)
                                                  : describe(inspected_, it->second->type->name);
  return absl::FailedPreconditionError(absl::StrFormat(
      "%s inside object::inspect of %s on node %u: the inspected state must not change while "
      "it is read, and this could wait or change it",
      what, object, self_));
}

}  // namespace iso::runtime
