// The worker side of comm-bench: two processes of an isorun job measure a transport
// directly (no runtime above it), rank 0 printing results. The transport is the shm one, or
// with ISO_BENCH_TRANSPORT=ucx the ucx one (ISO_BENCH_UCX_TLS restricting its lanes), whose
// worker addresses travel through the segment's key-value boards.
#include "comm/bench/comm_bench.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "comm/bench/bench_protocol.hpp"
#include "comm/shm_segment.hpp"
#ifdef ISO_BENCH_HAVE_UCX
#include "comm/ucx/ucx_transport.hpp"
#endif

namespace iso::bench {
namespace {

using clock = std::chrono::steady_clock;

std::uint32_t env_number(const char* name) {
  std::uint32_t value = 0;
  const char* text = std::getenv(name);
  if (text == nullptr || !absl::SimpleAtoi(text, &value)) {
    std::fprintf(stderr, "comm-bench: %s is missing or not a number\n", name);
    std::exit(2);
  }
  return value;
}

// Same placement as the MPI peer's --bind-to core: rank i on cpu i.
void pin_to_cpu(unsigned cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof(set), &set);
}

class endpoint {
 public:
  explicit endpoint(comm::transport& t) : t_(t) {}

  void send(comm::node_id to, const std::vector<std::byte>& bytes) {
    while (!t_.send(to, comm::byte_span(bytes)).ok()) {
    }
  }
  // Busy-polls until `count` packets have arrived.
  void receive(std::size_t count) {
    std::size_t got = 0;
    while (got < count) {
      std::size_t handled = 0;
      if (!t_.poll([](comm::received_packet&) {}, handled, count - got).ok()) std::exit(3);
      got += handled;
    }
  }

 private:
  comm::transport& t_;
};

void latency(endpoint& ep, std::uint32_t rank, std::size_t size) {
  std::vector<std::byte> message(size, std::byte{7});
  const comm::node_id peer = 1 - rank;
  {
    auto start = clock::now();
    for (int i = 0; i < kWarmup + kRoundTrips; ++i) {
      if (i == kWarmup) start = clock::now();
      if (rank == 0) {
        ep.send(peer, message);
        ep.receive(1);
      } else {
        ep.receive(1);
        ep.send(peer, message);
      }
    }
    const double us = std::chrono::duration<double, std::micro>(clock::now() - start).count();
    if (rank == 0) std::printf("lat %zu %.4f\n", size, us / kRoundTrips / 2);
  }
}

void bandwidth(endpoint& ep, std::uint32_t rank, std::size_t size) {
  std::vector<std::byte> message(size, std::byte{9});
  const std::vector<std::byte> ack(1, std::byte{1});
  const int messages = bandwidth_messages(size);
  {
    const auto start = clock::now();
    if (rank == 0) {
      for (int i = 0; i < messages; ++i) ep.send(1, message);
      ep.receive(1);
    } else {
      ep.receive(messages);
      ep.send(0, ack);
    }
    const double seconds = std::chrono::duration<double>(clock::now() - start).count();
    if (rank == 0) {
      std::printf("bw %zu %.1f\n", size, static_cast<double>(size) * messages / seconds / 1e6);
    }
  }
}

#ifdef ISO_BENCH_HAVE_UCX
// The ucx transport of `rank`, connected through the segment's boards and barrier.
std::unique_ptr<comm::transport> make_ucx_transport(comm::shm_segment& segment, std::uint32_t rank,
                                                    std::uint32_t size) {
  comm::ucx_options options;
  if (const char* tls = std::getenv("ISO_BENCH_UCX_TLS"); tls != nullptr && *tls != '\0') {
    options.config.emplace_back("TLS", tls);
  }
  auto made = comm::ucx_transport::create(rank, size, options);
  if (!made.ok()) {
    std::fprintf(stderr, "comm-bench: %s\n", std::string(made.status().message()).c_str());
    return nullptr;
  }
  const std::string own = (*made)->worker_address();
  std::span<std::byte> board = segment.board(rank);
  const std::uint32_t length = static_cast<std::uint32_t>(own.size());
  if (sizeof(length) + own.size() > board.size()) {
    std::fprintf(stderr, "comm-bench: a ucx address of %zu bytes does not fit the board\n",
                 own.size());
    return nullptr;
  }
  std::memcpy(board.data(), &length, sizeof(length));
  std::memcpy(board.data() + sizeof(length), own.data(), own.size());
  if (!segment.barrier(absl::Seconds(30)).ok()) {
    std::fprintf(stderr, "comm-bench: node %u: the address exchange failed\n", rank);
    return nullptr;
  }
  std::vector<std::string> addresses;
  for (std::uint32_t node = 0; node < size; ++node) {
    std::span<std::byte> theirs = segment.board(node);
    std::uint32_t n = 0;
    std::memcpy(&n, theirs.data(), sizeof(n));
    n = std::min<std::uint32_t>(n, static_cast<std::uint32_t>(theirs.size() - sizeof(n)));
    addresses.emplace_back(reinterpret_cast<const char*>(theirs.data() + sizeof(n)), n);
  }
  if (absl::Status s = (*made)->connect(addresses); !s.ok()) {
    std::fprintf(stderr, "comm-bench: %s\n", std::string(s.message()).c_str());
    return nullptr;
  }
  if (rank == 0) std::printf("lanes %s\n", (*made)->lanes().c_str());
  return *std::move(made);
}
#endif

}  // namespace

int run_worker() {
  const std::uint32_t rank = env_number("ISO_RANK");
  const std::uint32_t size = env_number("ISO_SIZE");
  const int fd = static_cast<int>(env_number("ISO_SHM_FD"));
  const char* secret = std::getenv("ISO_JOB_SECRET");
  if (size != 2) {
    std::fprintf(stderr, "comm-bench: run it with exactly 2 nodes, not %u\n", size);
    return 2;
  }
  pin_to_cpu(rank);
  auto segment =
      comm::shm_segment::join(fd, rank, size, secret ? secret : "", {.ring_capacity = 1 << 20});
  if (!segment.ok()) {
    std::fprintf(stderr, "comm-bench: %s\n", std::string(segment.status().message()).c_str());
    return 1;
  }
  std::unique_ptr<comm::transport> transport;
  const char* kind = std::getenv("ISO_BENCH_TRANSPORT");
  if (kind != nullptr && std::strcmp(kind, "ucx") == 0) {
#ifdef ISO_BENCH_HAVE_UCX
    transport = make_ucx_transport(**segment, rank, size);
    if (transport == nullptr) return 1;
#else
    std::fprintf(stderr, "comm-bench: this build has no ucx transport\n");
    return 2;
#endif
  } else {
    transport = comm::make_shm_transport(*segment, rank);
  }
  endpoint ep(*transport);
  if (!(*segment)->barrier(absl::Seconds(30)).ok()) {
    std::fprintf(stderr, "comm-bench: node %u: the first barrier failed\n", rank);
    return 1;
  }
  for (int rep = 0; rep < kRepetitionsPerRound; ++rep) {
    for (std::size_t s : kLatencySizes) latency(ep, rank, s);
    for (std::size_t s : kBandwidthSizes) bandwidth(ep, rank, s);
  }
  std::fflush(stdout);
  // The last packet may still sit in the transport (ucx moves data only inside its calls),
  // so the final barrier keeps polling until the peer is there too.
  const std::uint32_t ticket = (*segment)->barrier_arrive();
  const auto deadline = clock::now() + std::chrono::seconds(30);
  for (;;) {
    absl::StatusOr<bool> passed = (*segment)->barrier_passed(ticket);
    if (!passed.ok() || clock::now() > deadline) {
      std::fprintf(stderr, "comm-bench: node %u: the final barrier failed\n", rank);
      return 1;
    }
    if (*passed) {
      // Left, as a node of the runtime leaves after its end barrier: the launcher counts a
      // node that ends without leaving as failed, which would fail the barrier for a peer
      // still looking at it.
      (*segment)->mark_left(rank);
      return 0;
    }
    std::size_t handled = 0;
    if (!transport->poll([](comm::received_packet&) {}, handled).ok()) return 1;
  }
}

}  // namespace iso::bench
