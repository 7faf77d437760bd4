#include "apps/tsp/tsp_kernel.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "apps/common/seeded_input.hpp"

namespace iso::apps::tsp {

instance make_instance(std::size_t cities, std::uint64_t seed) {
  instance in;
  in.cities = cities;
  std::vector<double> x(cities);
  std::vector<double> y(cities);
  std::uint64_t state = seed;
  for (std::size_t c = 0; c < cities; ++c) {
    state = splitmix64(state);
    x[c] = static_cast<double>(state % 1000);
    state = splitmix64(state);
    y[c] = static_cast<double>(state % 1000);
  }
  in.distance.resize(cities * cities);
  in.shortest_edge = kNoTour;
  for (std::size_t a = 0; a < cities; ++a) {
    for (std::size_t b = 0; b < cities; ++b) {
      const auto length =
          static_cast<std::int32_t>(std::lround(std::hypot(x[a] - x[b], y[a] - y[b])));
      in.distance[a * cities + b] = length;
      if (a != b) in.shortest_edge = std::min(in.shortest_edge, length);
    }
  }
  in.nearest.resize(cities);
  for (std::size_t a = 0; a < cities; ++a) {
    std::vector<std::uint8_t>& order = in.nearest[a];
    for (std::size_t b = 0; b < cities; ++b) {
      if (b != a) order.push_back(static_cast<std::uint8_t>(b));
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint8_t p, std::uint8_t q) { return in.d(a, p) < in.d(a, q); });
  }
  return in;
}

namespace {

struct walk {
  const instance& in;
  std::int32_t best;
  std::vector<std::uint8_t> path;
  std::vector<bool> visited;
  std::vector<std::uint8_t> best_path;
  std::int32_t found = kNoTour;  // the length of best_path
  const refresh_bound& refresh;
  std::uint64_t visits = 0;

  void extend(std::int32_t length) {
    if (refresh && ++visits % kRefreshEvery == 0) best = std::min(best, refresh());
    const std::size_t here = path.back();
    const std::size_t left = in.cities - path.size();
    if (left == 0) {
      const std::int32_t total = length + in.d(here, 0);
      if (total < best) {
        best = total;
        found = total;
        best_path = path;
      }
      return;
    }
    // Each of the `left` cities and the way home cost at least the shortest edge.
    if (length + static_cast<std::int32_t>(left + 1) * in.shortest_edge >= best) return;
    for (const std::uint8_t next : in.nearest[here]) {
      if (visited[next]) continue;
      const std::int32_t longer = length + in.d(here, next);
      if (longer >= best) continue;
      visited[next] = true;
      path.push_back(next);
      extend(longer);
      path.pop_back();
      visited[next] = false;
    }
  }
};

void prefixes(const instance& in, job& j, std::size_t depth, std::vector<job>& out) {
  if (static_cast<std::size_t>(j.depth) == depth) {
    out.push_back(j);
    return;
  }
  const std::uint8_t here = j.path[static_cast<std::size_t>(j.depth) - 1];
  for (const std::uint8_t next : in.nearest[here]) {
    const auto begin = j.path.begin();
    if (std::find(begin, begin + j.depth, next) != begin + j.depth) continue;
    j.path[static_cast<std::size_t>(j.depth)] = next;
    j.length += in.d(here, next);
    ++j.depth;
    prefixes(in, j, depth, out);
    --j.depth;
    j.length -= in.d(here, next);
  }
}

}  // namespace

std::vector<job> make_jobs(const instance& in, std::size_t depth) {
  std::vector<job> out;
  job root;
  root.path[0] = 0;
  root.depth = 1;
  prefixes(in, root, depth, out);
  return out;
}

std::int32_t greedy_length(const instance& in) {
  std::vector<bool> visited(in.cities, false);
  std::size_t here = 0;
  visited[0] = true;
  std::int32_t length = 0;
  for (std::size_t step = 1; step < in.cities; ++step) {
    for (const std::uint8_t next : in.nearest[here]) {
      if (visited[next]) continue;
      length += in.d(here, next);
      visited[next] = true;
      here = next;
      break;
    }
  }
  return length + in.d(here, 0);
}

std::int32_t search(const instance& in, const job& start, std::int32_t bound,
                    std::vector<std::uint8_t>* tour, const refresh_bound& refresh) {
  walk w{in, bound, {}, std::vector<bool>(in.cities, false), {}, kNoTour, refresh};
  for (std::int32_t i = 0; i < start.depth; ++i) {
    const std::uint8_t c = start.path[static_cast<std::size_t>(i)];
    w.path.push_back(c);
    w.visited[c] = true;
  }
  w.extend(start.length);
  if (w.best_path.empty()) return kNoTour;
  if (tour != nullptr) *tour = w.best_path;
  return w.found;
}

std::int32_t exhaustive_length(const instance& in) {
  std::vector<std::uint8_t> order(in.cities);
  std::iota(order.begin(), order.end(), std::uint8_t{0});
  std::int32_t best = kNoTour;
  do {
    std::int32_t total = 0;
    for (std::size_t i = 0; i < order.size(); ++i) {
      total += in.d(order[i], order[(i + 1) % order.size()]);
    }
    best = std::min(best, total);
  } while (std::next_permutation(order.begin() + 1, order.end()));
  return best;
}

bool is_tour(const instance& in, const std::vector<std::uint8_t>& tour, std::int32_t length) {
  if (tour.size() != in.cities || tour.empty() || tour[0] != 0) return false;
  std::vector<std::uint8_t> sorted = tour;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t c = 0; c < sorted.size(); ++c) {
    if (sorted[c] != c) return false;
  }
  std::int32_t total = 0;
  for (std::size_t i = 0; i < tour.size(); ++i) total += in.d(tour[i], tour[(i + 1) % tour.size()]);
  return total == length;
}

}  // namespace iso::apps::tsp
