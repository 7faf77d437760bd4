// Moving blocks of a distributed array through one-sided windows (iso/window.hpp): a
// node's block as typed values in its own window, and puts of any length (one put carries
// at most node::max_message_size() bytes).
//
//   const iso::window w = node.register_window(block * sizeof(T));  // collective
//   std::span<T> mine = iso::apps::window_values<T>(node, w, block);
//   iso::apps::put_values(node, w, peer, first, std::span<const T>(run));  // at value `first`
//   node.fence();  // then a barrier: the peer may read what was put
#pragma once

#include <algorithm>
#include <cstddef>
#include <iso/iso.hpp>
#include <span>
#include <type_traits>

namespace iso::apps {

// The first `count` values of type T in this node's window `w` (the runtime's window
// memory is aligned for any scalar type).
template <typename T>
std::span<T> window_values(node& n, const window& w, std::size_t count) {
  static_assert(std::is_trivially_copyable_v<T>);
  const std::span<std::byte> bytes = n.local(w);
  return {reinterpret_cast<T*>(bytes.data()), count};
}

// Puts `values` at value `first` of node `target`'s window `w`, in as many puts as the
// message size limit needs.
template <typename T>
void put_values(node& n, const window& w, node_id target, std::size_t first,
                std::span<const T> values) {
  const std::size_t most = std::max<std::size_t>(1, n.max_message_size() / sizeof(T));
  std::size_t offset = first * sizeof(T);
  while (!values.empty()) {
    const std::span<const T> piece = values.first(std::min(values.size(), most));
    n.put(w, target, offset, std::as_bytes(piece));
    offset += piece.size_bytes();
    values = values.subspan(piece.size());
  }
}

}  // namespace iso::apps
