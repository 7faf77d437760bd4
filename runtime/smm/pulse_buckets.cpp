#include "runtime/smm/pulse_buckets.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

namespace iso::runtime {
namespace {

// The pool's bounds: enough for a burst of pulses in flight, and no buffer so large that
// keeping it would hold on to a big message's memory.
constexpr std::size_t kSpareLists = 32;
constexpr std::size_t kSpareBuffers = 256;
constexpr std::size_t kLargestSpareBuffer = std::size_t{64} << 10;

}  // namespace

bucket_item& pulse_buckets::file(std::uint64_t pulse) {
  // Pulses mostly arrive in order: search from the back.
  auto it = buckets_.end();
  while (it != buckets_.begin() && std::prev(it)->pulse >= pulse) --it;
  if (it == buckets_.end() || it->pulse != pulse) {
    std::vector<bucket_item> list;
    if (!spare_lists_.empty()) {
      list = std::move(spare_lists_.back());
      spare_lists_.pop_back();
    }
    it = buckets_.insert(it, {pulse, std::move(list)});
  }
  return it->items.emplace_back();
}

void pulse_buckets::add_held(std::uint64_t pulse, std::uint32_t source, std::uint32_t sequence,
                             std::span<const std::byte> ops, std::uint64_t record,
                             bool writes_applied) {
  bucket_item& item = file(pulse);
  item.writes_applied = writes_applied;
  item.source = source;
  item.sequence = sequence;
  item.held = true;
  item.held_ops = ops;
  item.record = record;
  ++held_;
}

void pulse_buckets::unhold_all(absl::FunctionRef<void(const bucket_item&)> released) {
  for (bucket& b : buckets_) {
    for (bucket_item& item : b.items) {
      if (!item.held) continue;
      if (!item.held_ops.empty() && item.ops.capacity() == 0 && !spare_buffers_.empty()) {
        item.ops = std::move(spare_buffers_.back());
        spare_buffers_.pop_back();
      }
      item.ops.append(item.held_ops.data(), item.held_ops.size());
      item.held = false;
      released(item);
    }
  }
  held_ = 0;
}

void pulse_buckets::add_marker(std::uint64_t pulse, std::uint32_t self, std::uint32_t sequence,
                               std::uint32_t isochrons) {
  bucket_item& item = file(pulse);
  item.source = self;
  item.own_marker = true;
  item.sequence = sequence;
  item.isochrons = isochrons;
}

std::vector<bucket_item> pulse_buckets::take(std::uint64_t pulse) {
  auto it = std::find_if(buckets_.begin(), buckets_.end(),
                         [pulse](const bucket& b) { return b.pulse == pulse; });
  if (it == buckets_.end()) return {};
  std::vector<bucket_item> items = std::move(it->items);
  buckets_.erase(it);
  held_ -= static_cast<std::size_t>(
      std::count_if(items.begin(), items.end(), [](const bucket_item& i) { return i.held; }));
  return items;
}

void pulse_buckets::recycle(std::vector<bucket_item> items) {
  for (bucket_item& item : items) {
    item.ops.clear();
    item.held = false;
    if (spare_buffers_.size() < kSpareBuffers && item.ops.capacity() != 0 &&
        item.ops.capacity() <= kLargestSpareBuffer) {
      spare_buffers_.push_back(std::move(item.ops));
    }
  }
  items.clear();
  if (spare_lists_.size() < kSpareLists && items.capacity() != 0) {
    spare_lists_.push_back(std::move(items));
  }
}

}  // namespace iso::runtime
