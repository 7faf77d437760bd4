// token-ring: a token carrying a counter travels around every node of the job, lap after
// lap; each node adds one. Prints the final count (which must equal laps x nodes) and the
// time per hop.
//
//   isorun -n 4 -- token-ring --laps 20000
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iso/iso.hpp>
#include <string>

#include "apps/common/count_argument.hpp"

namespace {

struct token {
  std::uint64_t count;
  std::uint64_t lap;
};

// The most laps a run may ask for; more is a typo, not a plan.
constexpr long kMaxLaps = 1'000'000'000;

long parse_laps(int argc, char** argv) {
  long laps = 10000;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--laps") == 0 && i + 1 < argc) {
      if (!iso::apps::parse_count(argv[++i], kMaxLaps, laps)) {
        std::fprintf(stderr, "token-ring: --laps takes a whole number from 1 to %ld, not '%s'\n",
                     kMaxLaps, argv[i]);
        return -1;
      }
    } else {
      std::fprintf(stderr, "usage: token-ring [--laps N]\n");
      return -1;
    }
  }
  return laps;
}

token receive_token(iso::node& node) {
  iso::message m = node.receive();
  token t;
  std::memcpy(&t, m.bytes().data(), sizeof(t));
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const long laps = parse_laps(argc, argv);
  if (laps < 0) return 2;
  return iso::run(argc, argv, [laps](iso::node& node) {
    const iso::node_id next = (node.id() + 1) % node.count();
    const auto start = std::chrono::steady_clock::now();
    token t{0, 0};
    if (node.id() == 0) {
      for (long lap = 0; lap < laps; ++lap) {
        t.count += 1;
        t.lap = static_cast<std::uint64_t>(lap);
        node.send(next, std::as_bytes(std::span(&t, 1)));
        t = receive_token(node);
      }
    } else {
      for (long lap = 0; lap < laps; ++lap) {
        t = receive_token(node);
        t.count += 1;
        node.send(next, std::as_bytes(std::span(&t, 1)));
      }
    }
    if (node.id() != 0) return;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::uint64_t expected = static_cast<std::uint64_t>(laps) * node.count();
    const double hops = static_cast<double>(expected);
    std::printf("token-ring: %ld laps around %u nodes, final count %llu (expected %llu): %s\n",
                laps, node.count(), static_cast<unsigned long long>(t.count),
                static_cast<unsigned long long>(expected), t.count == expected ? "OK" : "WRONG");
    std::printf("token-ring: %.3f s, %.2f us per hop\n", seconds, seconds * 1e6 / hops);
    if (t.count != expected) throw iso::error(iso::error_code::data_loss, "token count is wrong");
  });
}
