// The transport over per-pair byte rings in memory every node can reach. Used by `inproc`
// (threads of one process, heap memory) and `shm` (processes, a shared segment); the
// backends differ only in where the memory comes from.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "comm/byte_ring.hpp"
#include "comm/fabric_layout.hpp"
#include "comm/transport.hpp"

namespace iso::comm {

struct ring_transport_options {
  // Visit sources in a random order on each poll (debug builds), so that code relying on an
  // order the transport does not promise fails in tests.
  bool shuffle_poll_order = false;
};

class ring_transport final : public transport {
 public:
  // `base` points at memory laid out by `layout`, zeroed before any node used it, and shared
  // by all nodes of the fabric for as long as any of them runs. `keep_alive` (may be null)
  // owns that memory on this node's behalf.
  ring_transport(node_id self, const fabric_layout& layout, std::byte* base,
                 std::shared_ptr<void> keep_alive, ring_transport_options options = {});

  [[nodiscard]] std::size_t max_packet_size() const override { return max_packet_; }
  [[nodiscard]] absl::Status send(node_id destination, std::span<const byte_span> pieces) override;
  using transport::send;
  [[nodiscard]] absl::Status poll(packet_upcall upcall, std::size_t& handled,
                                  std::size_t budget) override;
  void wait(absl::Duration timeout, absl::FunctionRef<bool()> also_ready) override;
  using transport::wait;
  void wake() override;
  void defer_wakeups() override { deferring_ = true; }
  void wake_deferred() override;
  // Every node of a ring fabric is on this host.
  void announce_idle(bool idle) override;
  [[nodiscard]] std::optional<std::uint32_t> busy_neighbours(std::uint32_t enough) const override;
  [[nodiscard]] transport_counters counters() const override { return counters_; }

 private:
  struct inbound {
    explicit inbound(ring_consumer c) : ring(c) {}
    ring_consumer ring;
    ordered_release release;  // packets the layer above holds
  };

  void release_held(node_id source, std::uint64_t token) override;
  [[nodiscard]] bool anything_pending() const;
  [[nodiscard]] absl::Status drain(node_id source, packet_upcall upcall, std::size_t& handled,
                                   std::size_t budget);

  fabric_layout layout_;
  std::byte* base_;
  std::shared_ptr<void> keep_alive_;
  ring_transport_options options_;
  std::size_t max_packet_;
  std::vector<ring_producer> outbound_;  // indexed by destination
  std::vector<inbound> inbound_;         // indexed by source
  std::vector<doorbell*> doorbells_;     // indexed by node
  std::uint32_t next_source_ = 0;        // round-robin start, for fairness between sources
  std::vector<node_id> shuffled_;
  std::minstd_rand shuffle_rng_;
  transport_counters counters_;
  bool deferring_ = false;
  std::vector<node_id> wake_due_;  // destinations sent to while deferring, each once
  std::vector<bool> is_wake_due_;  // indexed by node
};

}  // namespace iso::comm
