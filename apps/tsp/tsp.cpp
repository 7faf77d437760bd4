// tsp: branch-and-bound travelling salesman on Orca-style shared objects (after the Orca
// TSP of Bal et al.).
//
// Two objects. A job queue (replicated; `get` is a guarded write that waits while the queue
// is empty and not closed) of partial tours of a fixed depth, which node 0 fills (in batches of
// 16) and then closes; and a replicated bound, the shortest tour length found so far, which every
// worker reads from its own replica before each job (and every few thousand tree nodes
// within one) and lowers (a write in the job-wide order) when
// it finds a shorter tour. Workers run on every node, node 0 too once it has filled the
// queue. Each node then reports its own best through the bound object, and node 0 waits
// (a guarded read) until every node has reported.
//
//   isorun -n 2 -- tsp --cities 13 --check
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <deque>
#include <iso/iso.hpp>
#include <optional>
#include <utility>
#include <vector>

#include "apps/common/command_line.hpp"
#include "apps/common/report.hpp"
#include "apps/tsp/tsp_kernel.hpp"

namespace {

using iso::apps::tsp::job;

struct queue_state {
  std::deque<job> jobs;
  bool closed = false;
};

// The bound: the shortest length known, and how many nodes have reported their own best.
struct bound_state {
  std::int32_t best = iso::apps::tsp::kNoTour;
  std::int32_t reported = 0;
};

// Jobs travel to the queue in batches: each add is a write in the job-wide order, which the
// filling node waits for, so one write per job kept the others idle while node 0 filled.
constexpr std::size_t kBatch = 16;
struct job_batch {
  std::array<job, kBatch> jobs{};
  std::int32_t count = 0;
};

constexpr iso::operation_id kAdd = 0, kClose = 1, kGet = 2;
constexpr iso::operation_id kLower = 0, kValue = 1, kReport = 2, kFinal = 3;

iso::object_type make_queue_type() {
  using guard = bool (*)(const queue_state&);
  using body = job (*)(queue_state&);
  return iso::typed_object<queue_state>("TspJobQueue")
      .write(kAdd, "add",
             [](queue_state& s, const job_batch& b) {
               const auto count = static_cast<std::size_t>(
                   std::clamp<std::int32_t>(b.count, 0, static_cast<std::int32_t>(kBatch)));
               s.jobs.insert(s.jobs.end(), b.jobs.begin(),
                             b.jobs.begin() + static_cast<std::ptrdiff_t>(count));
             })
      .write(kClose, "close", [](queue_state& s) { s.closed = true; })
      .write(
          kGet, "get",
          std::vector<std::pair<guard, body>>{
              {[](const queue_state& s) { return !s.jobs.empty(); },
               [](queue_state& s) {
                 const job j = s.jobs.front();
                 s.jobs.pop_front();
                 return j;
               }},
              // Closed and empty: a job of depth 0 says there is no more work.
              {[](const queue_state& s) { return s.closed; }, [](queue_state&) { return job{}; }}})
      .type();
}

iso::object_type make_bound_type() {
  using guard = bool (*)(const bound_state&, std::int32_t);
  using body = std::int32_t (*)(const bound_state&, std::int32_t);
  return iso::typed_object<bound_state>("TspBound")
      .write(kLower, "lower",
             [](bound_state& s, std::int32_t length) { s.best = std::min(s.best, length); })
      .read(kValue, "value", [](const bound_state& s) { return s.best; })
      .write(kReport, "report",
             [](bound_state& s, std::int32_t length) {
               s.best = std::min(s.best, length);
               ++s.reported;
             })
      .read(kFinal, "final",
            std::vector<std::pair<guard, body>>{
                {[](const bound_state& s, std::int32_t nodes) { return s.reported >= nodes; },
                 [](const bound_state& s, std::int32_t) { return s.best; }}})
      .type();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace iso::apps;
  long cities = 13;
  long depth = 3;
  long seed = 1;
  bool check = false;
  bool phases = false;
  command_line cli("tsp", "branch-and-bound TSP on a job queue and a replicated bound");
  cli.add_count("--cities", cities, 3, static_cast<long>(tsp::kMaxCities), "number of cities");
  cli.add_count("--depth", depth, 1, static_cast<long>(tsp::kMaxCities),
                "cities in a job's partial tour");
  cli.add_count("--seed", seed, 1, 1'000'000'000, "seed of the instance");
  cli.add_switch("--check", check, "compare the shortest length with the sequential search's");
  cli.add_switch("--phases", phases, "print where each node's time goes");
  if (std::optional<int> status = cli.parse(argc, argv)) return *status;
  if (depth > cities)
    return cli.refuse(format("--depth %ld is more than --cities %ld", depth, cities));

  const iso::object_type queue_type = make_queue_type();
  const iso::object_type bound_type = make_bound_type();
  return iso::run(argc, argv, [&](iso::node& node) {
    const tsp::instance in =
        tsp::make_instance(static_cast<std::size_t>(cities), static_cast<std::uint64_t>(seed));
    const std::int32_t first_bound = tsp::greedy_length(in) + 1;
    iso::object queue(node, queue_type, {.placement = iso::object_placement::replicated});
    const bound_state initial{first_bound, 0};
    std::vector<std::byte> initial_bytes(sizeof initial);
    std::memcpy(initial_bytes.data(), &initial, sizeof initial);
    iso::object bound(node, bound_type,
                      {.placement = iso::object_placement::replicated, .initial = initial_bytes});
    const auto nodes = static_cast<std::int32_t>(node.count());
    phase_timer timer;
    node.barrier();
    const stopwatch clock;
    std::size_t jobs_made = 0;
    if (node.id() == 0) {
      timer.enter("fill queue");
      const std::vector<job> jobs = tsp::make_jobs(in, static_cast<std::size_t>(depth));
      jobs_made = jobs.size();
      for (std::size_t at = 0; at < jobs.size(); at += kBatch) {
        job_batch b;
        b.count = static_cast<std::int32_t>(std::min(kBatch, jobs.size() - at));
        std::copy_n(jobs.begin() + static_cast<std::ptrdiff_t>(at), b.count, b.jobs.begin());
        queue.call<void>(kAdd, b);
      }
      queue.call<void>(kClose);
    }
    std::int32_t mine = tsp::kNoTour;
    std::size_t searched = 0;
    for (;;) {
      timer.enter("get");
      const job j = queue.call<job>(kGet);
      if (j.depth == 0) break;
      timer.enter("search");
      const auto known = bound.read<std::int32_t>(kValue);
      // Every few thousand tree nodes: the bound as it is now, which also serves this node's
      // share of the job-wide order (with the NIC inline, a node serves only inside the
      // runtime, and node 0's NIC holds the sequencer).
      const std::int32_t found = tsp::search(in, j, known, nullptr, [&] {
        node.poll();
        return bound.read<std::int32_t>(kValue);
      });
      ++searched;
      if (found < known) {
        timer.enter("lower");
        mine = std::min(mine, found);
        bound.call<void>(kLower, found);
      }
    }
    timer.enter("report");
    bound.call<void>(kReport, mine);
    std::int32_t best = 0;
    if (node.id() == 0) best = bound.read<std::int32_t>(kFinal, nodes);
    const double seconds = clock.seconds();
    timer.stop();
    if (phases) {
      std::printf("tsp: node %u: %zu jobs searched; %s\n", node.id(), searched,
                  timer.summary().c_str());
    }
    if (node.id() != 0) return;
    print_size(
        "tsp",
        format("%ld cities, %zu jobs of depth %ld, seed %ld", cities, jobs_made, depth, seed),
        node.count());
    print_time("tsp", seconds, "search");
    std::printf("tsp: shortest tour %d\n", best);
    if (!check) {
      print_check_skipped("tsp");
      return;
    }
    std::int32_t want = first_bound;
    for (const job& j : tsp::make_jobs(in, static_cast<std::size_t>(depth)))
      want = std::min(want, tsp::search(in, j, want, nullptr));
    const check_result outcome =
        best == want
            ? check_result{true, format("shortest tour %d, as the sequential search", best)}
            : check_result{false,
                           format("shortest tour %d, the sequential search found %d", best, want)};
    print_check("tsp", outcome);
    if (!outcome.passed) throw iso::error(iso::error_code::data_loss, "tsp: the check failed");
  });
}
