// size-lat: round-trip latency against payload size on 2 nodes, node 0 measuring:
//   message     node.send() of N bytes to node 1, which answers with 8 bytes;
//   call, copy  a write carrying N bytes on node 1's single copy (an RPC), 8-byte result;
//   call, repl  the same write on a replicated object (ordered to every replica; the call
//               returns once this node's replica applied it).
// Each figure is the median, and the minimum, over repetitions of the mean of a batch of
// round trips, in microseconds. A worker program: run it under isorun.
//
//   build/bin/isorun -n 2 -- build/bin/size-lat [--quick] [--size BYTES] [--messages]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "iso/iso.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

constexpr iso::operation_id kPut = 0;
constexpr iso::operation_id kCount = 1;
constexpr std::size_t kSizes[] = {8, 64, 512, 1024, 4096, 8192, 16384, 32768, 65536};

// State: how many bytes were put, in all.
iso::object_type sink_type() {
  iso::state_functions state;
  state.create = [](std::span<const std::byte>) -> void* { return new std::uint64_t(0); };
  state.destroy = [](void* s) { delete static_cast<std::uint64_t*>(s); };
  state.clone = [](const void* s) -> void* {
    return new std::uint64_t(*static_cast<const std::uint64_t*>(s));
  };
  iso::object_type type("Sink", std::move(state));
  iso::operation put;
  put.id = kPut;
  put.name = "put";
  put.kind = iso::operation_kind::write;
  put.body_may_throw = false;
  put.unmarshal = [](std::span<const std::byte> bytes) -> iso::decoded_arguments {
    return static_cast<std::uint64_t>(bytes.size());
  };
  put.alternatives.push_back(
      {{}, [](void* s, const iso::decoded_arguments& a, std::vector<std::byte>& out) {
         auto& total = *static_cast<std::uint64_t*>(s);
         total += std::any_cast<std::uint64_t>(a);
         out.resize(sizeof total);
         std::memcpy(out.data(), &total, sizeof total);
       }});
  type.add(std::move(put));
  iso::operation count;
  count.id = kCount;
  count.name = "count";
  count.kind = iso::operation_kind::read;
  count.body_may_throw = false;
  count.unmarshal = [](std::span<const std::byte>) -> iso::decoded_arguments { return {}; };
  count.alternatives.push_back(
      {{}, [](void* s, const iso::decoded_arguments&, std::vector<std::byte>& out) {
         out.resize(sizeof(std::uint64_t));
         std::memcpy(out.data(), s, sizeof(std::uint64_t));
       }});
  type.add(std::move(count));
  return type;
}

struct stats {
  double median = 0;
  double minimum = 0;
};

stats summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front()};
}

template <typename F>
stats measure(int repetitions, int batch, F&& once) {
  for (int i = 0; i < batch / 4 + 1; ++i) once();  // warm-up
  std::vector<double> means;
  for (int r = 0; r < repetitions; ++r) {
    const auto start = clock_type::now();
    for (int i = 0; i < batch; ++i) once();
    means.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - start).count() /
                    batch);
  }
  return summarize(std::move(means));
}

struct settings {
  bool quick = false;
  std::size_t only_size = 0;   // --size N: that size alone
  bool messages_only = false;  // --messages: the plain messages alone (for profiles)
};

void worker(iso::node& node, const settings& set) {
  const bool quick = set.quick;
  const int repetitions = quick ? 3 : 9;
  const int batch = quick ? 50 : 400;
  const iso::object_type type = sink_type();
  iso::object copy(node, type, {.placement = iso::object_placement::single_copy, .owner = 1});
  iso::object replica(node, type, {.placement = iso::object_placement::replicated});
  std::vector<std::byte> payload(kSizes[std::size(kSizes) - 1], std::byte{0x5a});
  const std::byte ack[8] = {};
  if (node.id() == 1) {
    // Answers node 0's messages until it sends an empty one; serves calls meanwhile.
    for (;;) {
      const iso::message m = node.receive();
      if (m.bytes().empty()) break;
      node.send(0, ack);
    }
    node.barrier();
    return;
  }
  std::printf("%8s  %-22s %-22s %-22s\n", "bytes", "message med/min us", "call, copy med/min us",
              "call, repl med/min us");
  for (std::size_t size : kSizes) {
    if (set.only_size != 0 && size != set.only_size) continue;
    const std::span<const std::byte> bytes = std::span(payload).first(size);
    const stats message = measure(repetitions, batch, [&] {
      node.send(1, bytes);
      (void)node.receive();
    });
    stats single, replicated;
    if (!set.messages_only) {
      single = measure(repetitions, batch, [&] { (void)copy.invoke(kPut, bytes); });
      replicated = measure(repetitions, batch, [&] { (void)replica.invoke(kPut, bytes); });
    }
    std::printf("%8zu  %9.1f %9.1f    %9.1f %9.1f    %9.1f %9.1f\n", size, message.median,
                message.minimum, single.median, single.minimum, replicated.median,
                replicated.minimum);
    std::fflush(stdout);
  }
  node.send(1, std::span<const std::byte>());
  node.barrier();
}

}  // namespace

int main(int argc, char** argv) {
  settings set;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--quick") set.quick = true;
    if (arg == "--messages") set.messages_only = true;
    if (arg == "--size" && i + 1 < argc) set.only_size = std::strtoull(argv[++i], nullptr, 10);
  }
  return iso::run(argc, argv, iso::options{}, [&](iso::node& node) { worker(node, set); });
}
