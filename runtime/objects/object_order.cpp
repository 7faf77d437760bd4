#include "runtime/objects/object_order.hpp"

#include <vector>

namespace iso::runtime {
namespace {

std::vector<comm::node_id> everyone(std::uint32_t nodes) {
  std::vector<comm::node_id> members(nodes);
  for (comm::node_id n = 0; n < nodes; ++n) members[n] = n;
  return members;
}

class sequencer_order final : public object_order {
 public:
  sequencer_order(sequencer_groups& groups, std::uint32_t group, std::uint32_t nodes)
      : groups_(groups), group_(group), nodes_(nodes) {
    groups_.open(group_, everyone(nodes));
    inbox_ = &groups_.inbox(group_);
  }
  [[nodiscard]] order_kind kind() const override { return order_kind::sequencer; }
  [[nodiscard]] std::size_t max_batch() const override { return groups_.max_batch(nodes_); }
  [[nodiscard]] absl::Status send(std::span<const std::byte> batch) override {
    return groups_.send(group_, batch);
  }
  [[nodiscard]] absl::Status add(std::span<const std::byte> batch) override {
    (void)batch;
    return absl::FailedPreconditionError(
        "the objects order is the sequencer order, which is outside logical time; only the "
        "isotach order can put a write into an isochron");
  }
  // Looked at every round: kept, not looked up.
  [[nodiscard]] std::deque<ordered_delivery>& inbox() override { return *inbox_; }

 private:
  sequencer_groups& groups_;
  std::uint32_t group_;
  std::uint32_t nodes_;
  std::deque<ordered_delivery>* inbox_ = nullptr;
};

class isotach_order final : public object_order {
 public:
  isotach_order(isotach_groups& groups, std::uint32_t group, std::uint32_t nodes)
      : groups_(groups), group_(group), nodes_(nodes) {
    groups_.open(group_, everyone(nodes));
    inbox_ = &groups_.inbox(group_);
  }
  [[nodiscard]] order_kind kind() const override { return order_kind::isotach; }
  [[nodiscard]] std::size_t max_batch() const override { return groups_.max_batch(nodes_); }
  [[nodiscard]] absl::Status send(std::span<const std::byte> batch) override {
    return groups_.send(group_, batch);
  }
  [[nodiscard]] absl::Status add(std::span<const std::byte> batch) override {
    return groups_.add(group_, batch);
  }
  // Looked at every round: kept, not looked up.
  [[nodiscard]] std::deque<ordered_delivery>& inbox() override { return *inbox_; }

 private:
  isotach_groups& groups_;
  std::uint32_t group_;
  std::uint32_t nodes_;
  std::deque<ordered_delivery>* inbox_ = nullptr;
};

}  // namespace

std::unique_ptr<object_order> make_object_order(order_kind kind, sequencer_groups& sequenced,
                                                isotach_groups& isotach, std::uint32_t group,
                                                std::uint32_t nodes) {
  if (kind == order_kind::isotach) return std::make_unique<isotach_order>(isotach, group, nodes);
  return std::make_unique<sequencer_order>(sequenced, group, nodes);
}

const char* order_name(order_kind kind) {
  return kind == order_kind::isotach ? "isotach" : "sequencer";
}

}  // namespace iso::runtime
