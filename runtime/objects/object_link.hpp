// What object handles (iso::object) share with their node: they may outlive it, and then
// say so instead of reaching into a node that is gone.
#pragma once

namespace iso::detail {

class node_state;

struct object_link {
  node_state* owner = nullptr;  // null once the node has ended
};

}  // namespace iso::detail
