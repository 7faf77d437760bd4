// Automatic placement (iso::object_placement::automatic): the owner of a single copy counts
// the calls it runs by calling node and, after each window of calls, offers the copy to a
// node that made more than twice as many as the owner itself. The offer rides on the reply
// to that node's next call; the node then migrates the copy to itself through the objects
// order (migration.cpp), so the move happens at one point of the order for everyone and
// results never depend on it. One offer at a time: the next waits until the copy moved.
#include <algorithm>

#include "runtime/objects/object_table.hpp"

namespace iso::runtime {
namespace {

// Calls between decisions: enough that one burst does not move a copy back and forth.
constexpr std::uint64_t kDecisionWindow = 64;

}  // namespace

void object_table::note_use(entry& e, comm::node_id caller) {
  if (!e.automatic || !e.type->state.save || !e.type->state.load) return;
  ++e.uses[caller];
  if (++e.counted < kDecisionWindow) return;
  // The heaviest user, the lowest id among equals.
  const auto heaviest =
      static_cast<comm::node_id>(std::max_element(e.uses.begin(), e.uses.end()) - e.uses.begin());
  if (e.offer_to == nodes_ && heaviest != self_ && e.uses[heaviest] > 2 * e.uses[self_]) {
    e.offer_to = heaviest;
    e.offer_sent = false;
  }
  std::fill(e.uses.begin(), e.uses.end(), 0);
  e.counted = 0;
}

bool object_table::offer_for(entry& e, comm::node_id caller) {
  if (e.offer_to != caller || e.offer_sent) return false;
  e.offer_sent = true;
  return true;
}

void object_table::reset_uses(entry& e) {
  std::fill(e.uses.begin(), e.uses.end(), 0);
  e.counted = 0;
  e.offer_to = nodes_;
  e.offer_sent = false;
}

}  // namespace iso::runtime
