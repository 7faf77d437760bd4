#include "runtime/smm/same_host_reads.hpp"

#include <algorithm>

#include "runtime/smm/operations.hpp"

namespace iso::runtime {

same_host_reads::same_host_reads(node_id self, const page_table& pages,
                                 std::span<const std::span<std::byte>> windows,
                                 std::uint32_t page_variables, std::uint32_t nodes)
    : pages_(pages), peers_(nodes), nodes_(nodes) {
  for (node_id n = 0; n < windows.size() && n < nodes; ++n) {
    if (n != self) peers_[n] = window_reader(windows[n], page_variables);
  }
}

bool same_host_reads::note(node_id owner, const page_info& page, std::uint64_t address,
                           std::uint32_t count, std::uint32_t index, std::uint32_t slot,
                           std::uint32_t first) {
  if (owner >= peers_.size() || !peers_[owner].present() || page.read_target != owner ||
      page.target_index >= peers_[owner].capacity()) {
    return false;
  }
  reads_.push_back({address, count, index, slot, first,
                    peers_[owner].page(page.target_index) + pages_.offset_in_page(address)});
  return true;
}

bool same_host_reads::note_stream(node_id owner, std::span<const std::byte> stream) {
  op_reader in(stream);
  stream_header header;
  if (!in.get(header)) return false;
  clear();
  while (!in.done()) {
    op_header op;
    read_body body;
    if (!in.get(op) || op.code != op_code::read || !in.get(body)) return false;
    const page_info* page = pages_.lookup(op.address);
    if (page == nullptr ||
        !note(owner, *page, op.address, op.count, op.index, body.slot, body.first)) {
      return false;
    }
  }
  return true;
}

same_host_reads::outcome same_host_reads::try_serve(node_id owner, const order_point& earliest,
                                                    std::uint64_t next_stamp_floor,
                                                    order_point& at) {
  std::size_t total = 0;
  for (const noted_read& read : reads_) total += read.count;
  values_.resize(total);
  bool owner_behind = false;
  const window_reader& peer = peers_[owner];
  const window_reader::outcome got = peer.snapshot([&](const window_stand& stand) {
    seen_through_ = stand.through;
    if (stand.through >= next_stamp_floor) return false;  // later isochrons could sit earlier
    if (stand.through < earliest.pulse) {
      owner_behind = true;
      return false;
    }
    // Right before the owner's next local isochron, at a step no earlier than this node
    // has seen: the owner's next change will sit there or later, once raise_step says so.
    const std::uint32_t slot = nodes_ + owner;
    const std::uint64_t step =
        std::max(stand.step, step_from(earliest, stand.through, slot, stand.next_local, 0, false));
    at = {stand.through, step, slot, stand.next_local, 0};
    std::size_t k = 0;
    for (const noted_read& read : reads_) {
      for (std::uint32_t i = 0; i < read.count; ++i) {
        const shared_variable v = window_reader::load(read.vars[i]);
        // Waits for an assign: the owner's pending-read table handles that.
        if (v.sched_by != 0) return false;
        values_[k++] = v.value;
      }
    }
    if (step > stand.step) peer.raise_step(step);
    return true;
  });
  switch (got) {
    case window_reader::outcome::consistent:
      return outcome::served;
    case window_reader::outcome::changing:
      return outcome::changing;
    case window_reader::outcome::declined:
      break;
  }
  return owner_behind ? outcome::owner_behind : outcome::declined;
}

}  // namespace iso::runtime
