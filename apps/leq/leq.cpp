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
#include <cstring>
#include <iso/iso.hpp>
#include <optional>
#include <span>
#include <vector>

#include "apps/common/command_line.hpp"
#include "apps/common/object_state.hpp"
#include "apps/common/partition.hpp"
#include "apps/common/report.hpp"
#include "apps/leq/leq_kernel.hpp"

namespace {

constexpr iso::operation_id kPut = 0, kGet = 1;

// Two iterates, by the parity of their iteration number; `parts` counts the blocks put.
struct vector_state {
  struct slot {
    std::uint64_t iteration = ~std::uint64_t{0};
    std::uint64_t parts = 0;
    std::vector<double> x;
  };
  std::array<slot, 2> slots;
};

struct put_header {
  std::uint64_t iteration = 0;
  std::uint64_t first = 0;  // the block's first entry
};
struct put_arguments {
  put_header at;
  std::vector<double> values;
};
struct get_arguments {
  std::uint64_t iteration = 0;
  std::uint64_t parts = 0;  // the number of blocks that make a whole iterate
};

std::vector<std::byte> put_bytes(put_header at, std::span<const double> values) {
  return iso::apps::argument_bytes(at, values);
}

std::vector<std::byte> get_bytes(get_arguments args) { return iso::apps::argument_bytes(args); }

// The type of an n-entry iterate; n comes with the creation as initial bytes.
iso::object_type make_vector_type() {
  iso::state_functions state;
  state.create = [](std::span<const std::byte> initial) -> void* {
    std::uint64_t n = 0;
    if (initial.size() != sizeof n) {
      throw iso::error(iso::error_code::invalid_argument,
                       iso::apps::format("LeqVector takes its length (8 bytes) as initial "
                                         "bytes, not %zu bytes",
                                         initial.size()));
    }
    std::memcpy(&n, initial.data(), sizeof n);
    auto* s = new vector_state();
    for (vector_state::slot& slot : s->slots) slot.x.assign(n, 0.0);
    return s;
  };
  state.destroy = [](void* s) { delete static_cast<vector_state*>(s); };
  state.clone = [](const void* s) -> void* {
    return new vector_state(*static_cast<const vector_state*>(s));
  };
  iso::object_type type("LeqVector", std::move(state));

  iso::operation put;
  put.id = kPut;
  put.name = "put";
  put.kind = iso::operation_kind::write;
  put.unmarshal = [](std::span<const std::byte> bytes) -> iso::decoded_arguments {
    put_arguments args;
    if (bytes.size() < sizeof args.at + sizeof(double) ||
        (bytes.size() - sizeof args.at) % sizeof(double) != 0) {
      throw iso::error(iso::error_code::invalid_argument,
                       iso::apps::format("put takes an iteration, a first entry and a whole, "
                                         "non-empty block of doubles, not %zu bytes",
                                         bytes.size()));
    }
    std::memcpy(&args.at, bytes.data(), sizeof args.at);
    args.values.resize((bytes.size() - sizeof args.at) / sizeof(double));
    std::memcpy(args.values.data(), bytes.data() + sizeof args.at,
                args.values.size() * sizeof(double));
    return args;
  };
  // A block beyond the end throws, which leaves every replica as it was (the state is
  // copied before each put for that; a copy of two iterates is cheap beside an iteration).
  put.alternatives.push_back(
      {{}, [](void* s, const iso::decoded_arguments& a, std::vector<std::byte>&) {
         const auto& args = std::any_cast<const put_arguments&>(a);
         vector_state::slot& slot = static_cast<vector_state*>(s)->slots[args.at.iteration % 2];
         if (args.at.first > slot.x.size() || args.values.size() > slot.x.size() - args.at.first) {
           throw iso::error(iso::error_code::invalid_argument,
                            iso::apps::format("put: entries %llu to %llu are beyond the %zu of x",
                                              static_cast<unsigned long long>(args.at.first),
                                              static_cast<unsigned long long>(
                                                  args.at.first + args.values.size() - 1),
                                              slot.x.size()));
         }
         if (slot.iteration != args.at.iteration) {
           slot.iteration = args.at.iteration;
           slot.parts = 0;
         }
         std::copy(args.values.begin(), args.values.end(),
                   slot.x.begin() + static_cast<std::ptrdiff_t>(args.at.first));
         ++slot.parts;
       }});
  type.add(std::move(put));

  iso::operation get;
  get.id = kGet;
  get.name = "get";
  get.kind = iso::operation_kind::read;
  get.body_may_throw = false;
  get.unmarshal = [](std::span<const std::byte> bytes) -> iso::decoded_arguments {
    get_arguments args;
    if (bytes.size() != sizeof args) {
      throw iso::error(iso::error_code::invalid_argument,
                       iso::apps::format("get takes an iteration and a number of blocks (16 "
                                         "bytes), not %zu bytes",
                                         bytes.size()));
    }
    std::memcpy(&args, bytes.data(), sizeof args);
    return args;
  };
  // Waits until every block of the iteration is in.
  get.alternatives.push_back(
      {[](const void* s, const iso::decoded_arguments& a) {
         const auto args = std::any_cast<get_arguments>(a);
         const vector_state::slot& slot =
             static_cast<const vector_state*>(s)->slots[args.iteration % 2];
         return slot.iteration == args.iteration && slot.parts >= args.parts;
       },
       [](void* s, const iso::decoded_arguments& a, std::vector<std::byte>& out) {
         const auto args = std::any_cast<get_arguments>(a);
         const std::vector<double>& x =
             static_cast<const vector_state*>(s)->slots[args.iteration % 2].x;
         out.resize(x.size() * sizeof(double));
         std::memcpy(out.data(), x.data(), out.size());
       }});
  type.add(std::move(get));
  return type;
}

// The whole iterate of `iteration` from `vector`, waiting until every block is in.
void get_iterate(iso::object& vector, get_arguments args, std::span<double> into) {
  const std::vector<std::byte> bytes = vector.invoke_read(kGet, get_bytes(args));
  if (bytes.size() != into.size_bytes()) {
    throw iso::error(iso::error_code::data_loss,
                     iso::apps::format("leq: iterate %llu has %zu bytes, not %zu",
                                       static_cast<unsigned long long>(args.iteration),
                                       bytes.size(), into.size_bytes()));
  }
  std::memcpy(into.data(), bytes.data(), bytes.size());
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
  cli.add_count("--n", n, 1, 4096, "unknowns");
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
    std::vector<std::byte> length(sizeof(std::uint64_t));
    const std::uint64_t entries = size;
    std::memcpy(length.data(), &entries, sizeof entries);
    iso::object vector(node, vector_type,
                       {.placement = iso::object_placement::replicated, .initial = length});

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
        iso::object_call put = vector.start(kPut, put_bytes({k, own.begin}, mine));
        timer.enter("get iterate");
        get_iterate(vector, {k, nodes}, next);
        (void)put.get();
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
