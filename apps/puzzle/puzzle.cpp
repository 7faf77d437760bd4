// puzzle: IDA* on a seeded 15-puzzle on Orca-style shared objects (after the Orca 15-puzzle
// of Bal et al.).
//
// Every node expands the same tree of a round (down to --depth) and so has the same list of
// jobs. One replicated object shares out the round and collects its outcome: `take` (a
// write in the job-wide order) hands the calling node the next few jobs of the round, and
// when the list is used up, each node `report`s what its jobs found; a guarded read
// `outcome` ("every node has reported round r") gives every node the same totals, so all
// agree on the next threshold, or on the end, with no further message. The object keeps
// two rounds by parity: a node takes from round r + 2 only after reading the outcome of
// r + 1, which needs every node's report of r + 1, made after reading the outcome of r.
//
// With the NIC inline a node serves the job-wide order only while in the runtime, so a
// search polls the node every 4096 tree nodes (as tsp does).
//
//   isorun -n 2 -- puzzle --moves 60 --check
#include <algorithm>
#include <array>
#include <cstdio>
#include <iso/iso.hpp>
#include <optional>
#include <vector>

#include "apps/common/command_line.hpp"
#include "apps/common/report.hpp"
#include "apps/puzzle/puzzle_kernel.hpp"

namespace {

using iso::apps::puzzle::tally;

// One round: its number, the next job to hand out, and the reports so far.
struct round_slot {
  std::int64_t round = -1;
  std::uint64_t next = 0;
  std::uint32_t reported = 0;
  tally total;
};
using rounds_state = std::array<round_slot, 2>;

// Jobs handed out per take: each take is a write in the job-wide order.
constexpr std::uint64_t kChunk = 2;

constexpr iso::operation_id kTake = 0, kReport = 1, kOutcome = 2;

round_slot& slot_of(rounds_state& s, std::int64_t round) {
  round_slot& slot = s[static_cast<std::size_t>(round % 2)];
  if (slot.round != round) slot = round_slot{round, 0, 0, {}};
  return slot;
}

iso::object_type make_rounds_type() {
  using guard = bool (*)(const rounds_state&, std::int64_t, std::uint32_t);
  using body = tally (*)(const rounds_state&, std::int64_t, std::uint32_t);
  return iso::typed_object<rounds_state>("PuzzleRounds")
      .write(kTake, "take",
             [](rounds_state& s, std::int64_t round, std::uint64_t count) {
               round_slot& slot = slot_of(s, round);
               const std::uint64_t first = slot.next;
               slot.next += count;
               return first;
             })
      .write(kReport, "report",
             [](rounds_state& s, std::int64_t round, tally found) {
               round_slot& slot = slot_of(s, round);
               slot.total.add(found);
               ++slot.reported;
             })
      .read(kOutcome, "outcome",
            std::vector<std::pair<guard, body>>{
                {[](const rounds_state& s, std::int64_t round, std::uint32_t nodes) {
                   const round_slot& slot = s[static_cast<std::size_t>(round % 2)];
                   return slot.round == round && slot.reported >= nodes;
                 },
                 [](const rounds_state& s, std::int64_t round, std::uint32_t) {
                   return s[static_cast<std::size_t>(round % 2)].total;
                 }}})
      .type();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace iso::apps;
  long moves = 50;
  long depth = 6;
  long seed = 1;
  bool check = false;
  bool phases = false;
  command_line cli("puzzle",
                   "IDA* on a seeded 15-puzzle, each round's jobs shared out by a replicated "
                   "object");
  cli.add_count("--moves", moves, 1, 200, "length of the random walk that makes the start");
  cli.add_count("--depth", depth, 1, 20, "depth at which a round's tree is cut into jobs");
  cli.add_count("--seed", seed, 1, 1'000'000'000, "seed of the walk");
  cli.add_switch("--check", check,
                 "compare the length, the solutions and the nodes with the sequential search's");
  cli.add_switch("--phases", phases, "print where each node's time goes");
  if (std::optional<int> status = cli.parse(argc, argv)) return *status;

  const iso::object_type rounds_type = make_rounds_type();
  return iso::run(argc, argv, [&](iso::node& node) {
    const puzzle::board start = puzzle::make_start(static_cast<std::uint64_t>(seed), moves);
    iso::object rounds(node, rounds_type, {.placement = iso::object_placement::replicated});
    const std::uint32_t nodes = node.count();
    const std::uint32_t me = node.id();
    const std::function<void()> poll = [&node] { node.poll(); };
    puzzle::solution found;
    std::uint64_t searched = 0;
    phase_timer timer;
    node.barrier();
    const stopwatch clock;
    std::int32_t threshold = puzzle::manhattan(start);
    for (std::int64_t round = 0; threshold <= puzzle::kMaxThreshold; ++round) {
      timer.enter("expand");
      tally mine;
      const std::vector<puzzle::job> jobs =
          puzzle::make_jobs(start, static_cast<int>(depth), threshold, mine);
      if (me != 0) mine.nodes = 0;  // every node expands; node 0 counts the expansion
      // The next take is on its way while this node searches what the last one gave it:
      // a take waits for the job-wide order, which cost about as much as a small job.
      timer.enter("take");
      iso::pending<std::uint64_t> next = rounds.start<std::uint64_t>(kTake, round, kChunk);
      for (;;) {
        timer.enter("take");
        const std::uint64_t first = next.get();
        if (first >= jobs.size()) break;
        next = rounds.start<std::uint64_t>(kTake, round, kChunk);
        timer.enter("search");
        const std::uint64_t end = std::min<std::uint64_t>(first + kChunk, jobs.size());
        for (std::uint64_t j = first; j < end; ++j) {
          mine.add(puzzle::search(jobs[j], threshold, poll));
        }
        searched += end - first;
      }
      timer.enter("report");
      rounds.call<void>(kReport, round, mine);
      const auto total = rounds.read<tally>(kOutcome, round, nodes);
      ++found.rounds;
      found.nodes += total.nodes;
      if (total.solutions > 0) {
        found.length = total.shortest;
        found.solutions = total.solutions;
        break;
      }
      threshold = total.exceeded;
    }
    const double seconds = clock.seconds();
    timer.stop();
    if (phases) {
      std::printf("puzzle: node %u: %s; %llu jobs\n", me, timer.summary().c_str(),
                  static_cast<unsigned long long>(searched));
    }
    if (me != 0) return;
    print_size("puzzle",
               format("walk of %ld moves, seed %ld (%s), jobs at depth %ld", moves, seed,
                      puzzle::show(start).c_str(), depth),
               nodes);
    print_time("puzzle", seconds, "search");
    if (!check) {
      print_check_skipped("puzzle");
      return;
    }
    const puzzle::solution want = puzzle::solve(start, static_cast<int>(depth));
    check_result outcome{true, ""};
    if (found.length != want.length || found.solutions != want.solutions ||
        found.nodes != want.nodes || found.rounds != want.rounds) {
      outcome = {false, format("length %d, %llu solutions, %llu nodes, %d rounds; the sequential "
                               "search: %d, %llu, %llu, %d",
                               found.length, static_cast<unsigned long long>(found.solutions),
                               static_cast<unsigned long long>(found.nodes), found.rounds,
                               want.length, static_cast<unsigned long long>(want.solutions),
                               static_cast<unsigned long long>(want.nodes), want.rounds)};
    } else if (found.length > moves) {
      outcome = {false, format("the shortest solution has %d moves, more than the walk's %ld",
                               found.length, moves)};
    } else {
      outcome.detail = format(
          "shortest solution %d moves, %llu of them, %llu nodes in %d rounds; "
          "as the sequential search",
          found.length, static_cast<unsigned long long>(found.solutions),
          static_cast<unsigned long long>(found.nodes), found.rounds);
    }
    print_check("puzzle", outcome);
    if (!outcome.passed) throw iso::error(iso::error_code::data_loss, "puzzle: the check failed");
  });
}
