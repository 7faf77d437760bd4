// leq: Jacobi iteration for a seeded diagonally dominant system Ax = b on Orca-style shared
// objects (after the Orca LEQ of Bal et al.).
//
// Every node owns a block of rows of A and the same block of x. Each iteration it computes
// its block of the next x from the whole previous x, puts the block into a replicated
// vector object (a write in the job-wide order: every node writes every iteration, the
// ordering stress case), and reads the whole next x with a guarded read of its own replica
// ("all blocks of iteration k are in"). Every node then has the same x and computes the same
// largest change, so all stop after the same iteration with no further agreement. The
// object keeps two iterations, by parity: a node can put iteration k + 2 only after reading
// all of k + 1, which no node puts before reading all of k, so a slot is never reused
// before every node has read it.
//
// With --check node 0 runs the sequential solver on the whole system and compares x, entry
// for entry: the two are identical, because every entry is computed from the same whole
// previous x with its sum in the same order.
//
//   isorun -n 2 -- leq --n 2048 --check
#include <algorithm>
#include <array>
#include <cstdio>
#include <iso/iso.hpp>
#include <optional>
#include <span>
#include <vector>

#include "apps/common/command_line.hpp"
#include "apps/common/partition.hpp"
#include "apps/common/report.hpp"
#include "apps/leq/leq_kernel.hpp"

namespace {

constexpr iso::operation_id kPut = 0, kGet = 1;

// The most unknowns (--n), so the most entries a block may reach.
constexpr std::uint64_t kMaxEntries = 4096;

// Two iterates, by the parity of their iteration number; `parts` counts the blocks put. An
// iterate grows to cover the blocks put into it, so that it has n entries once every node
// put its block of an iteration.
struct vector_state {
  struct slot {
    std::uint64_t iteration = ~std::uint64_t{0};
    std::uint64_t parts = 0;
    std::vector<double> x;
  };
  std::array<slot, 2> slots;
};

struct block_at {
  std::uint64_t iteration = 0;
  std::uint64_t first = 0;  // the block's first entry
};
struct get_arguments {
  std::uint64_t iteration = 0;
  std::uint64_t parts = 0;  // the number of blocks that make a whole iterate
};

using get_guard = bool (*)(const vector_state&, get_arguments);
using get_body = std::span<const double> (*)(const vector_state&, get_arguments);

// put(at, block) stores a block of iteration at.iteration; get(iteration, parts) waits until
// `parts` blocks of the iteration are in and returns the iterate. A block is checked before
// the put goes out (a whole, non-empty block within the most entries), so the put cannot
// fail and no copy of the two iterates is taken before it.
iso::object_type make_vector_type() {
  return iso::typed_object<vector_state>("LeqVector")
      .write(
          kPut, "put",
          [](vector_state& s, block_at at, std::span<const double> block) noexcept {
            vector_state::slot& slot = s.slots[at.iteration % 2];
            if (slot.iteration != at.iteration) {
              slot.iteration = at.iteration;
              slot.parts = 0;
            }
            if (slot.x.size() < at.first + block.size()) slot.x.resize(at.first + block.size());
            std::copy(block.begin(), block.end(),
                      slot.x.begin() + static_cast<std::ptrdiff_t>(at.first));
            ++slot.parts;
          },
          [](block_at at, std::span<const double> block) {
            if (block.empty() || at.first > kMaxEntries || block.size() > kMaxEntries - at.first) {
              throw iso::error(
                  iso::error_code::invalid_argument,
                  iso::apps::format("put: a block of %zu entries from entry %llu is empty or "
                                    "beyond the %llu entries an iterate may have",
                                    block.size(), static_cast<unsigned long long>(at.first),
                                    static_cast<unsigned long long>(kMaxEntries)));
            }
          })
      .read(kGet, "get",
            std::vector<std::pair<get_guard, get_body>>{
                {[](const vector_state& s, get_arguments args) {
                   const vector_state::slot& slot = s.slots[args.iteration % 2];
                   return slot.iteration == args.iteration && slot.parts >= args.parts;
                 },
                 [](const vector_state& s, get_arguments args) {
                   return std::span<const double>(s.slots[args.iteration % 2].x);
                 }}})
      .type();
}

// The whole iterate of `iteration` from `vector`, waiting until every block is in.
void get_iterate(iso::object& vector, get_arguments args, std::span<double> into) {
  vector.read_into(kGet, into, args);
}

std::string too_many_nodes(unsigned nodes, long n) {
  return iso::apps::format("%u nodes are more than the %ld unknowns (use --n %u or more)", nodes, n,
                           nodes);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace iso::apps;
  long n = 512;
  long iterations = 10'000;
  long digits = 10;
  long seed = 1;
  bool check = false;
  bool phases = false;
  command_line cli("leq",
                   "Jacobi iteration for a seeded diagonally dominant Ax = b, every node's block "
                   "of x put through a replicated object each iteration");
  cli.add_count("--n", n, 1, static_cast<long>(kMaxEntries), "unknowns");
  cli.add_count("--iterations", iterations, 1, 1'000'000, "most iterations");
  cli.add_count("--digits", digits, 1, 15,
                "stop once no entry of x changes by 10^-digits or more in an iteration");
  cli.add_count("--seed", seed, 1, 1'000'000'000, "seed of the system");
  cli.add_switch("--check", check, "compare x with the sequential version's, bit for bit");
  cli.add_switch("--phases", phases, "print where each node's time goes");
  if (std::optional<int> status = cli.parse(argc, argv)) return *status;
  if (job_nodes() > static_cast<unsigned long>(n))
    return cli.refuse(too_many_nodes(job_nodes(), n));

  const iso::object_type vector_type = make_vector_type();
  return iso::run(argc, argv, [&](iso::node& node) {
    const auto size = static_cast<std::size_t>(n);
    const std::uint32_t nodes = node.count();
    const std::uint32_t me = node.id();
    if (nodes > size) throw iso::error(iso::error_code::invalid_argument, too_many_nodes(nodes, n));
    const block_range own = block_of(size, nodes, me);
    const auto sys_seed = static_cast<std::uint64_t>(seed);
    const std::vector<double> rows = leq::make_rows(size, sys_seed, own.begin, own.size());
    const std::vector<double> rhs = leq::make_rhs(size, sys_seed, own.begin, own.size());
    iso::object vector(node, vector_type, {.placement = iso::object_placement::replicated});

    const double tolerance = leq::tolerance_of(digits);
    std::vector<double> x(size, 0.0), next(size, 0.0);
    long done = 0;
    double change = 0;
    phase_timer timer;
    node.barrier();
    const stopwatch clock;
    while (done < iterations) {
      timer.enter("iterate");
      const std::span<double> mine = std::span(next).subspan(own.begin, own.size());
      leq::iterate(rows, rhs, own.begin, x, mine);
      if (nodes > 1) {
        const auto k = static_cast<std::uint64_t>(done);
        timer.enter("put block");
        // Waiting for the put is waiting for this node's replica to apply it, in the
        // job-wide order; the guarded get below waits for that and the others' puts anyway.
        iso::pending<void> put =
            vector.start<void>(kPut, block_at{k, own.begin}, std::span<const double>(mine));
        timer.enter("get iterate");
        get_iterate(vector, {k, nodes}, next);
        put.get();
      }
      timer.enter("iterate");
      change = leq::max_change(x, next);
      x.swap(next);
      ++done;
      if (change < tolerance) break;
    }
    const double seconds = clock.seconds();
    timer.stop();
    if (phases) std::printf("leq: node %u: %s\n", me, timer.summary().c_str());
    if (me == 0) {
      print_size("leq", format("%ld unknowns, seed %ld, %ld iterations", n, seed, done), nodes);
      print_time("leq", seconds, "iterations");
    }
    if (!check || me != 0) {
      if (me == 0) print_check_skipped("leq");
      return;
    }
    // Every node ends with the same whole x; node 0 compares its copy.
    const std::vector<double> a = leq::make_rows(size, sys_seed, 0, size);
    const std::vector<double> b = leq::make_rhs(size, sys_seed, 0, size);
    const leq::solution want = leq::solve(a, b, iterations, tolerance);
    check_result outcome{true, ""};
    if (want.iterations != done) {
      outcome = {false, format("stopped after %ld iterations, the sequential run after %ld", done,
                               want.iterations)};
    }
    for (std::size_t i = 0; outcome.passed && i < size; ++i) {
      if (!identical(x[i], want.x[i])) {
        outcome = {false, format("first difference from the sequential x at entry %zu: %.17g != "
                                 "%.17g",
                                 i, x[i], want.x[i])};
      }
    }
    if (outcome.passed) {
      outcome.detail = format(
          "residual max |Ax - b| %.3g, last change %.3g; x identical to the "
          "sequential one",
          leq::residual(a, b, x), change);
    }
    print_check("leq", outcome);
    if (!outcome.passed) throw iso::error(iso::error_code::data_loss, "leq: the check failed");
  });
}
