// The pieces of branch-and-bound TSP that the sequential and the parallel version share, so
// that both search the same tree and find the same optimal length.
//
// A seeded instance of `cities` points on a 1000 x 1000 square, with whole-number (rounded
// Euclidean) distances, so that tour lengths are exact. Tours start at city 0. The search
// tree is split at a fixed depth into jobs (the partial tours of that many cities, made in
// one order); each job is searched depth first, nearest city first, cut off when its
// length plus a lower bound for the rest reaches the best length known.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace iso::apps::tsp {

inline constexpr std::size_t kMaxCities = 20;
inline constexpr std::int32_t kNoTour = 0x3fffffff;  // longer than every tour

struct instance {
  std::size_t cities = 0;
  std::vector<std::int32_t> distance;  // cities x cities, row-major
  // Per city, the other cities nearest first (ties by number).
  std::vector<std::vector<std::uint8_t>> nearest;
  // The shortest edge of the whole instance (for the lower bound of the rest of a tour).
  std::int32_t shortest_edge = 0;
  [[nodiscard]] std::int32_t d(std::size_t a, std::size_t b) const {
    return distance[a * cities + b];
  }
};

// A partial tour: the first `depth` cities visited, starting at 0, and its length so far.
// Trivially copyable: it travels through the job queue as bytes.
struct job {
  std::array<std::uint8_t, kMaxCities> path{};
  std::int32_t depth = 0;
  std::int32_t length = 0;
};

[[nodiscard]] instance make_instance(std::size_t cities, std::uint64_t seed);

// The partial tours of `depth` cities (1 <= depth <= cities), in a fixed order.
[[nodiscard]] std::vector<job> make_jobs(const instance& in, std::size_t depth);

// The length of the nearest-neighbour tour from city 0: the first bound.
[[nodiscard]] std::int32_t greedy_length(const instance& in);

// Called every kRefreshEvery tree nodes of a search, when given: returns the best length
// known elsewhere now (the search cuts with it from then on). A parallel worker reads the
// global bound there, and serves its node meanwhile.
inline constexpr std::uint64_t kRefreshEvery = 4096;
using refresh_bound = std::function<std::int32_t()>;

// The best complete tour below `bound` that extends `start`: its length (kNoTour when there
// is none) and, when `tour` is not null and one was found, its cities in order.
[[nodiscard]] std::int32_t search(const instance& in, const job& start, std::int32_t bound,
                                  std::vector<std::uint8_t>* tour,
                                  const refresh_bound& refresh = {});

// The shortest tour by trying every order of cities 1..n-1 (for small instances: (n-1)!
// tours), without the pruning or the jobs of search(): an independent reference.
inline constexpr std::size_t kMaxExhaustiveCities = 10;
[[nodiscard]] std::int32_t exhaustive_length(const instance& in);

// Whether `tour` visits every city once, starting at 0, and has length `length`.
[[nodiscard]] bool is_tour(const instance& in, const std::vector<std::uint8_t>& tour,
                           std::int32_t length);

}  // namespace iso::apps::tsp
