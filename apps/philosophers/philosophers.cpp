// philosophers: the isotach dining philosophers (after philo.c in the Regehr report's
// appendix). Every node is a philosopher between two forks, each fork a shared variable.
// To pick up both forks, a philosopher issues ONE isochron {read left, read right,
// sched left, sched right}: atomically it takes the forks' values and makes them
// unsubstantiated, so a neighbour's later pick-up waits (in the copy holder's pending-read
// table) until this philosopher puts the forks down with {assign left, assign right}.
// No locks, no retries, no deadlock.
//
// Each use adds 10 to a fork's value, so if two neighbours ever held a fork at once they
// would both have read the same value and the final value would fall short. Node 0 checks
// every fork at the end.
//
//   isorun -n 4 -- philosophers --meals 1000
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iso/iso.hpp>

#include "apps/common/count_argument.hpp"

namespace {

// The most meals a run may ask for; more is a typo, not a plan.
constexpr long kMaxMeals = 1'000'000'000;

long parse_meals(int argc, char** argv) {
  long meals = 1000;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--meals") == 0 && i + 1 < argc) {
      if (!iso::apps::parse_count(argv[++i], kMaxMeals, meals)) {
        std::fprintf(stderr, "philosophers: --meals takes a whole number from 1 to %ld, not '%s'\n",
                     kMaxMeals, argv[i]);
        return -1;
      }
    } else {
      std::fprintf(stderr, "usage: philosophers [--meals N]\n");
      return -1;
    }
  }
  return meals;
}

}  // namespace

int main(int argc, char** argv) {
  const long meals = parse_meals(argc, argv);
  if (meals < 0) return 2;
  return iso::run(argc, argv, [meals](iso::node& node) {
    const std::uint32_t n = node.count();
    if (n < 2) throw iso::error(iso::error_code::invalid_argument, "philosophers needs 2+ nodes");
    // Fork i sits between philosophers i-1 and i. Every node holds a copy of every fork:
    // reads are local, and the scheds and assigns go to all copies in one isochron.
    auto forks = node.allocate<std::int64_t>(n, iso::placement::everywhere());
    const auto left = forks[node.id()];
    const auto right = forks[(node.id() + 1) % n];
    const auto start = std::chrono::steady_clock::now();
    for (long meal = 0; meal < meals; ++meal) {
      iso::value<std::int64_t> l, r;
      {
        iso::isochron pick_up(node);
        l = pick_up.read(left);
        r = pick_up.read(right);
        pick_up.sched(left);
        pick_up.sched(right);
      }
      const std::int64_t lv = l.get();  // eating starts when both values are here
      const std::int64_t rv = r.get();
      iso::isochron put_down(node);
      put_down.assign(left, lv + 10);
      put_down.assign(right, rv + 10);
    }
    node.barrier();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (node.id() != 0) return;
    iso::isochron look(node);
    auto all = look.read(forks, 0, n);
    look.end();
    const std::vector<std::int64_t> values = all.get();
    bool ok = true;
    for (std::uint32_t i = 0; i < n; ++i) ok &= values[i] == 20 * meals;
    std::printf("philosophers: %u philosophers ate %ld meals each in %.3f s (%.1f us per meal)\n",
                n, meals, seconds, seconds * 1e6 / static_cast<double>(meals));
    std::printf(
        "philosophers: every fork used %ld times by its two neighbours, never at once: %s\n",
        2 * meals, ok ? "OK" : "VIOLATED");
    if (!ok) throw iso::error(iso::error_code::data_loss, "a fork was held by two neighbours");
  });
}
