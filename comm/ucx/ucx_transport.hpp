// The `ucx` backend: packets travel as UCP active messages, over whatever lanes UCX finds
// between two nodes (shared memory on one host, TCP or verbs between hosts). Nodes are
// processes (or, in tests, threads) that each own one ucx_transport.
//
//   auto t = iso::comm::ucx_transport::create(rank, size, {.config = {{"TLS", "tcp"}}});
//   publish(rank, (*t)->worker_address());        // through the job's bootstrap
//   std::vector<std::string> all = gather();     // every node's address, by rank
//   if (absl::Status s = (*t)->connect(all); !s.ok()) { /* names the node */ }
//   // from here on, *t is an ordinary iso::comm::transport
//
// Setup is two-phase because the addresses travel through a bootstrap that the transport
// does not know: create() makes the UCP context and worker, connect() the endpoints.
// send(), poll() and wait() before connect() return FailedPrecondition / nothing.
//
// Guarantees on top of UCX: FIFO per ordered pair even though UCX does not promise an order
// for active messages (each packet carries a per-pair sequence number; early arrivals are
// parked and handed up in order; a gap still open after 5 s is DataLoss naming the peer).
// Back-pressure: a receiver returns credit for what it has handed up and released, and a
// sender may have at most 4 MiB (payload plus a 16-byte header per packet) unreturned to
// each peer, and at most 64 sends queued inside UCX per peer; beyond either, send() is
// Unavailable and nothing grows. Packets are up to 1 MiB. Received packets are held
// without a copy (UCX's persistent data, released when the held packet is).
//
// Progress: UCX moves data only inside poll(), wait() and send() calls, so a node must
// keep polling while a peer may still be reading a large (rendezvous) packet from it.
//
// Failure: endpoints use UCX's error-handling mode NONE, since mode PEER turns off the
// shared-memory lanes; a dead peer is not reported here and must be noticed by the
// launcher or the bootstrap. The destructor closes the endpoints (flushing them), which on
// some lanes (TCP) needs the peers' progress too: the nodes of a job close together. It
// waits at most 2 s, then logs a warning naming the peer and goes on.
//
// Thread safety: as transport.hpp (one thread sends, polls and waits; wake() from any).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "comm/transport.hpp"

namespace iso::comm {

struct ucx_options {
  // Extra UCX_* settings, e.g. {"TLS", "tcp"}; empty = UCX chooses.
  std::vector<std::pair<std::string, std::string>> config;
};

class ucx_transport final : public transport {
 public:
  // Phase 1: context + worker for node `rank` of `size`. Errors name what UCX said.
  // InvalidArgument when rank >= size or a config key is unknown to UCX; Unavailable when
  // UCX cannot make a context or worker here.
  static absl::StatusOr<std::unique_ptr<ucx_transport>> create(node_id rank, node_id size,
                                                               const ucx_options& options = {});
  // This node's worker address, opaque bytes to publish through the bootstrap.
  [[nodiscard]] std::string worker_address() const;
  // Phase 2: endpoints to every node from their addresses (indexed by rank, own included).
  // InvalidArgument when the number of addresses is not size() or one is not a worker
  // address made for its node (naming the node; checked before any endpoint is made);
  // Unavailable when UCX cannot reach a node (naming it); FailedPrecondition when already
  // connected. Does not wait for the peers.
  absl::Status connect(std::span<const std::string> addresses);
  // Which UCX lanes/transports the endpoints use, for the settings table, e.g. "posix,tcp".
  // Empty before connect().
  [[nodiscard]] std::string lanes() const;

  ~ucx_transport() override;
  ucx_transport(const ucx_transport&) = delete;
  ucx_transport& operator=(const ucx_transport&) = delete;

  [[nodiscard]] std::size_t max_packet_size() const override;
  [[nodiscard]] absl::Status send(node_id destination, std::span<const byte_span> pieces) override;
  using transport::send;
  [[nodiscard]] absl::Status poll(packet_upcall upcall, std::size_t& handled,
                                  std::size_t budget) override;
  void wait(absl::Duration timeout, absl::FunctionRef<bool()> also_ready) override;
  using transport::wait;
  void wake() override;
  [[nodiscard]] transport_counters counters() const override;

  struct state;  // the UCX objects and the per-peer bookkeeping (ucx_transport.cpp)

 private:
  ucx_transport(node_id rank, node_id size, std::unique_ptr<state> s);
  void release_held(node_id source, std::uint64_t token) override;

  std::unique_ptr<state> state_;
};

}  // namespace iso::comm
