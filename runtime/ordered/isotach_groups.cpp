#include "runtime/ordered/isotach_groups.hpp"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_format.h"
#include "runtime/smm/isochron_builder.hpp"

namespace iso::runtime {

isotach_groups::isotach_groups(shared_memory_manager& smm, event_loop& loop)
    : smm_(smm), loop_(loop) {
  smm_.set_handler(kOrderedGroupHandler,
                   [this](comm::node_id source, std::span<const std::byte> payload) {
                     on_batch(source, payload);
                   });
}

void isotach_groups::open(std::uint32_t group, std::span<const comm::node_id> members) {
  groups_[group].members.assign(members.begin(), members.end());
}

std::size_t isotach_groups::max_batch(std::size_t members) const {
  // One record carries the whole isochron: per member a stream header, an operation header
  // and the batch padded to 8 bytes, besides the part's overhead (this node's own copy is
  // counted as if it travelled too, which costs little and keeps the bound simple).
  constexpr std::size_t kPerMember =
      isochron_builder::kPartOverhead + sizeof(stream_header) + sizeof(op_header) + 8;
  const std::size_t share = loop_.nic().channel().max_record() / std::max<std::size_t>(members, 1);
  const std::size_t limit = std::min(share, smm_.max_message_size());
  const std::size_t room =
      limit > kPerMember + sizeof(batch_header) ? limit - kPerMember - sizeof(batch_header) : 0;
  return room & ~std::size_t{7};
}

absl::Status isotach_groups::add(std::uint32_t group, std::span<const std::byte> batch) {
  const group_state& g = groups_[group];
  const batch_header head{.group = group};
  scratch_.resize(sizeof(head) + batch.size());
  std::memcpy(scratch_.data(), &head, sizeof(head));
  if (!batch.empty()) std::memcpy(scratch_.data() + sizeof(head), batch.data(), batch.size());
  return smm_.message(g.members, kOrderedGroupHandler, scratch_);
}

absl::Status isotach_groups::send(std::uint32_t group, std::span<const std::byte> batch) {
  if (absl::Status s = smm_.begin(); !s.ok()) return s;
  absl::Status added = add(group, batch);
  absl::Status ended = smm_.end();
  return added.ok() ? ended : added;
}

void isotach_groups::on_batch(comm::node_id source, std::span<const std::byte> payload) {
  batch_header head;
  if (payload.size() < sizeof(head)) {
    loop_.fail(absl::InvalidArgumentError(
        absl::StrFormat("ordered batch of %u bytes from node %u is shorter than its header",
                        payload.size(), source)));
    return;
  }
  std::memcpy(&head, payload.data(), sizeof(head));
  auto it = groups_.find(head.group);
  if (it == groups_.end()) {
    loop_.fail(absl::InvalidArgumentError(
        absl::StrFormat("ordered message from node %u for group %u, which this node has not opened",
                        source, head.group)));
    return;
  }
  if (absl::Status s =
          unpack_batch(source, head.group, payload.subspan(sizeof(head)), it->second.inbox);
      !s.ok()) {
    loop_.fail(std::move(s));
  }
}

}  // namespace iso::runtime
