#include <numeric>

#include "iso/shared.hpp"

namespace iso {

placement placement::everywhere() {
  placement p;
  p.rule_ = [](std::uint64_t, std::uint32_t nodes) {
    std::vector<node_id> all(nodes);
    std::iota(all.begin(), all.end(), 0);
    return all;
  };
  return p;
}

placement placement::on(node_id node) { return on(std::vector<node_id>{node}); }

placement placement::on(std::vector<node_id> nodes) {
  placement p;
  p.rule_ = [nodes = std::move(nodes)](std::uint64_t, std::uint32_t) { return nodes; };
  return p;
}

placement placement::spread() {
  placement p;
  p.rule_ = [](std::uint64_t page, std::uint32_t nodes) {
    return std::vector<node_id>{static_cast<node_id>(page % nodes)};
  };
  return p;
}

placement placement::per_page(std::function<std::vector<node_id>(std::uint64_t page)> rule) {
  placement p;
  p.rule_ = [rule = std::move(rule)](std::uint64_t page, std::uint32_t) { return rule(page); };
  return p;
}

std::vector<node_id> placement::copyset(std::uint64_t page, std::uint32_t nodes) const {
  return rule_(page, nodes);
}

}  // namespace iso
