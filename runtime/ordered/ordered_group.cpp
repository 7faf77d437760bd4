// iso::ordered_group (include/iso/ordered_group.hpp): validation, the collective
// construction, batching, and the two orders: sequencer over runtime/ordered/sequencer_groups,
// isotach over runtime/ordered/isotach_groups.
#include "iso/ordered_group.hpp"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "iso/isochron.hpp"
#include "runtime/collective_digest.hpp"
#include "runtime/node_state.hpp"
#include "runtime/ordered/batch_framing.hpp"

namespace iso {
namespace {

// A batch is sent once it holds this much: large enough that 64-byte messages cost a
// multicast per hundred or so, small enough to stay far below the NIC's window.
constexpr std::size_t kBatchBytes = 16 * 1024;

}  // namespace

struct ordered_group::impl {
  detail::node_state* state = nullptr;
  std::uint32_t id = 0;
  std::vector<node_id> members;
  order_kind order = order_kind::sequencer;
  bool member = false;
  std::size_t max_message = 0;
  std::size_t max_batch = 0;
  std::size_t batch_limit = 0;
  std::vector<std::byte> batch;

  [[nodiscard]] absl::Status usable(const char* call) const {
    if (!member) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "%s on node %u, which is not a member of ordered group %u", call, state->id(), id));
    }
    return state->usable_outside_isochron(call);
  }
  [[nodiscard]] absl::Status flush() {
    if (batch.empty()) return absl::OkStatus();
    absl::Status s = order == order_kind::isotach ? state->isotach_ordered().send(id, batch)
                                                  : state->sequenced().send(id, batch);
    batch.clear();
    return s;
  }
  [[nodiscard]] std::deque<runtime::ordered_delivery>& inbox() {
    return order == order_kind::isotach ? state->isotach_ordered().inbox(id)
                                        : state->sequenced().inbox(id);
  }
  [[nodiscard]] std::optional<ordered_message> pop() {
    std::deque<runtime::ordered_delivery>& inbox = this->inbox();
    if (inbox.empty()) return std::nullopt;
    ordered_message m{.sender = inbox.front().sender, .bytes = std::move(inbox.front().bytes)};
    inbox.pop_front();
    return m;
  }
};

namespace {

// Sorted members, or why they cannot form a group of this job.
absl::StatusOr<std::vector<node_id>> check_members(std::span<const node_id> given,
                                                   std::uint32_t nodes) {
  if (given.empty()) {
    return absl::InvalidArgumentError("an ordered group needs at least one member; none given");
  }
  std::vector<node_id> members(given.begin(), given.end());
  std::sort(members.begin(), members.end());
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (members[i] >= nodes) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "ordered group member %u is not a node of the job (nodes 0..%u)", members[i], nodes - 1));
    }
    if (i > 0 && members[i] == members[i - 1]) {
      return absl::InvalidArgumentError(
          absl::StrFormat("ordered group names node %u twice", members[i]));
    }
  }
  return members;
}

}  // namespace

ordered_group::ordered_group(node& n, std::span<const node_id> members)
    : ordered_group(n, members, detail::node_state::of(n).options().ordering) {}

ordered_group::ordered_group(node& n, std::span<const node_id> members, order_kind order)
    : impl_(std::make_unique<impl>()) {
  detail::node_state& state = detail::node_state::of(n);
  const auto turn = detail::value_or_throw(state.begin_collective("ordered_group"));
  impl_->members = detail::value_or_throw(check_members(members, state.count()));
  impl_->state = &state;
  impl_->order = order;
  impl_->id = state.next_group_id();
  impl_->member = std::binary_search(impl_->members.begin(), impl_->members.end(), state.id());
  const std::size_t max_batch = order == order_kind::isotach
                                    ? state.isotach_ordered().max_batch(impl_->members.size())
                                    : state.sequenced().max_batch(impl_->members.size());
  impl_->max_batch = max_batch;
  impl_->batch_limit = std::min(kBatchBytes, max_batch);
  impl_->max_message = std::min(state.max_message_size(), max_batch - runtime::kFrameBytes);
  if (impl_->member) {
    if (order == order_kind::isotach) {
      state.isotach_ordered().open(impl_->id, impl_->members);
    } else {
      state.sequenced().open(impl_->id, impl_->members);
    }
  }
  const std::uint64_t digest =
      runtime::collective_digest(runtime::collective_digest::kind::ordered_group)
          .add(impl_->id)
          .add(std::span<const std::uint32_t>(impl_->members))
          .add(static_cast<std::uint64_t>(order))
          .value();
  detail::throw_if_error(state.rendezvous(turn, digest, "ordered_group"));
}

ordered_group::ordered_group(ordered_group&&) noexcept = default;
ordered_group& ordered_group::operator=(ordered_group&&) noexcept = default;

ordered_group::~ordered_group() {
  if (impl_ && impl_->member && impl_->state->health().ok()) (void)impl_->flush();
}

bool ordered_group::member() const { return impl_->member; }
std::span<const node_id> ordered_group::members() const { return impl_->members; }
order_kind ordered_group::order() const { return impl_->order; }
std::size_t ordered_group::max_message_size() const { return impl_->max_message; }

void ordered_group::submit(std::span<const std::byte> bytes) {
  detail::throw_if_error(impl_->usable("ordered_group::submit"));
  if (bytes.size() > impl_->max_message) {
    detail::throw_status(absl::InvalidArgumentError(absl::StrFormat(
        "ordered_group::submit: a message of %u bytes exceeds the group's maximum of %u",
        bytes.size(), impl_->max_message)));
  }
  const std::size_t framed = runtime::kFrameBytes + bytes.size();
  if (!impl_->batch.empty() && impl_->batch.size() + framed > impl_->batch_limit) {
    detail::throw_if_error(impl_->flush());
  }
  runtime::append_framed(impl_->batch, bytes);
  if (impl_->batch.size() >= impl_->batch_limit) detail::throw_if_error(impl_->flush());
}

void ordered_group::submit(isochron& in, std::span<const std::byte> bytes) {
  detail::node_state& state = *impl_->state;
  if (!impl_->member) detail::throw_if_error(impl_->usable("ordered_group::submit"));
  if (impl_->order != order_kind::isotach) {
    detail::throw_status(absl::FailedPreconditionError(absl::StrFormat(
        "ordered_group::submit into an isochron: group %u has the sequencer order, which is "
        "outside logical time; only an isotach-ordered group's messages can join an isochron",
        impl_->id)));
  }
  if (&detail::node_state::of(in.node_) != &state || !in.open_) {
    detail::throw_status(absl::FailedPreconditionError(
        absl::StrFormat("ordered_group::submit into an isochron on node %u: the isochron is %s",
                        state.id(), in.open_ ? "another node's" : "already issued")));
  }
  detail::throw_if_error(state.health());
  if (bytes.size() > impl_->max_message) {
    detail::throw_status(absl::InvalidArgumentError(absl::StrFormat(
        "ordered_group::submit: a message of %u bytes exceeds the group's maximum of %u",
        bytes.size(), impl_->max_message)));
  }
  runtime::isotach_groups& groups = state.isotach_ordered();
  // What this node batched before goes first, in this isochron: per-sender FIFO.
  if (!impl_->batch.empty() &&
      impl_->batch.size() + runtime::kFrameBytes + bytes.size() > impl_->max_batch) {
    detail::throw_if_error(groups.add(impl_->id, impl_->batch));
    impl_->batch.clear();
  }
  const std::size_t before = impl_->batch.size();
  runtime::append_framed(impl_->batch, bytes);
  if (absl::Status s = groups.add(impl_->id, impl_->batch); !s.ok()) {
    impl_->batch.resize(before);
    detail::throw_status(s);
  }
  impl_->batch.clear();
}

void ordered_group::flush() {
  detail::throw_if_error(impl_->usable("ordered_group::flush"));
  detail::throw_if_error(impl_->flush());
}

ordered_message ordered_group::receive() {
  detail::throw_if_error(impl_->usable("ordered_group::receive"));
  detail::throw_if_error(impl_->flush());
  std::optional<ordered_message> m;
  detail::throw_if_error(impl_->state->loop().wait_for([&] {
    m = impl_->pop();
    return m.has_value();
  }));
  return *std::move(m);
}

std::optional<ordered_message> ordered_group::try_receive() {
  detail::throw_if_error(impl_->usable("ordered_group::try_receive"));
  detail::throw_if_error(impl_->flush());
  if (std::optional<ordered_message> m = impl_->pop()) return m;
  bool did = false;
  detail::throw_if_error(impl_->state->loop().progress(did));
  return impl_->pop();
}

}  // namespace iso
