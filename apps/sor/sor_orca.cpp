// sor-orca: red-black successive over-relaxation on Orca-style shared objects (after the
// Orca SOR of Bal et al.); the same kernel as `sor`, which exchanges its rows through
// isotach memory instead.
//
// Every node owns a block of interior rows in private memory, with a ghost row above and
// below. Each boundary between two neighbouring nodes has two border objects, one per
// direction: after each half-sweep (a colour's sweep) a node puts its first row into the
// object its upper neighbour reads and its last row into the one its lower neighbour reads,
// stamped with the half-sweep's number; then it fills its ghost rows with guarded reads
// ("the row of half-sweep t is there") of the objects its neighbours write. A border object
// keeps two slots, by the parity of the half-sweep: a node can put half-sweep t + 2 only
// after reading its neighbour's row of t + 1, which the neighbour puts only after reading
// the row of t, so a slot is never overwritten before it was read.
//
// A border object is replicated (the put goes through the job-wide order to every node, the
// get reads the caller's own replica); --single-copy keeps it only on the node that reads
// it instead (the put is a request to that node and its reply), which is the less traffic
// but was the slower on two nodes (see the README). With --check every node puts its rows into an
// object on node 0, which compares the whole grid with the sequential run's, bit for bit.
//
//   isorun -n 2 -- sor-orca --n 1024 --iterations 200 --check
#include <algorithm>
#include <cstdio>
#include <deque>
#include <iso/iso.hpp>
#include <optional>
#include <span>
#include <vector>

#include "apps/common/command_line.hpp"
#include "apps/common/partition.hpp"
#include "apps/common/report.hpp"
#include "apps/sor/sor_kernel.hpp"

namespace {

constexpr iso::operation_id kPut = 0, kGet = 1;

// Slots a row object may have: the rows of the largest grid and its two edges.
constexpr std::uint64_t kMaxSlots = 4096 + 2;

// Rows by slot, each with the stamp it was put with.
struct row_slots {
  struct slot {
    bool filled = false;
    std::uint64_t stamp = 0;
    std::vector<double> row;
  };
  std::vector<slot> slots;
};

struct slot_key {
  std::uint64_t slot = 0;
  std::uint64_t stamp = 0;
};

// Refuses a slot beyond the last, before the call goes anywhere.
void check_slot(slot_key key) {
  if (key.slot >= kMaxSlots) {
    throw iso::error(iso::error_code::invalid_argument,
                     iso::apps::format("slot %llu is beyond the last slot %llu",
                                       static_cast<unsigned long long>(key.slot),
                                       static_cast<unsigned long long>(kMaxSlots - 1)));
  }
}

using get_guard = bool (*)(const row_slots&, slot_key);
using get_body = std::span<const double> (*)(const row_slots&, slot_key);

// put(key, row) fills a slot; get(key) waits until the slot holds the row of that stamp.
// A put cannot fail once its slot is checked, so no copy of the slots is taken before it.
iso::object_type make_row_type() {
  return iso::typed_object<row_slots>("SorRows")
      .write(
          kPut, "put",
          [](row_slots& s, slot_key key, std::span<const double> row) noexcept {
            if (s.slots.size() <= key.slot) s.slots.resize(key.slot + 1);
            row_slots::slot& into = s.slots[key.slot];
            into.filled = true;
            into.stamp = key.stamp;
            into.row.assign(row.begin(), row.end());
          },
          [](slot_key key, std::span<const double>) { check_slot(key); })
      .read(kGet, "get",
            std::vector<std::pair<get_guard, get_body>>{
                {[](const row_slots& s, slot_key key) {
                   return key.slot < s.slots.size() && s.slots[key.slot].filled &&
                          s.slots[key.slot].stamp == key.stamp;
                 },
                 [](const row_slots& s, slot_key key) {
                   return std::span<const double>(s.slots[key.slot].row);
                 }}},
            check_slot)
      .type();
}

iso::pending<void> put_row(iso::object& rows, slot_key key, std::span<const double> row) {
  return rows.start<void>(kPut, key, row);
}

// The row put into `rows` under `key`, waiting until it is there.
void get_row(iso::object& rows, slot_key key, std::span<double> into) {
  rows.read_into(kGet, into, key);
}

std::string too_many_nodes(unsigned nodes, long n) {
  return iso::apps::format("%u nodes are more than the %ld interior rows (use --n %u or more)",
                           nodes, n, nodes);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace iso::apps;
  long n = 256;
  long iterations = 50;
  bool check = false;
  bool phases = false;
  bool single_copy = false;
  command_line cli("sor-orca",
                   "red-black SOR on an n x n grid, hot top edge, border rows through shared "
                   "objects");
  // A row travels as one argument of a put, which must fit in one message (64 KiB by
  // default; ISO_RING_CAPACITY raises it).
  cli.add_count("--n", n, 2, 4096, "interior rows and columns");
  cli.add_count("--iterations", iterations, 1, 1'000'000, "red and black sweeps");
  cli.add_switch("--check", check, "compare the grid with the sequential version's, bit for bit");
  cli.add_switch("--phases", phases, "print where each node's time goes");
  cli.add_switch("--single-copy", single_copy,
                 "keep each border object as a single copy on the node that reads it (default: "
                 "replicated on every node)");
  if (std::optional<int> status = cli.parse(argc, argv)) return *status;
  if (job_nodes() > static_cast<unsigned long>(n))
    return cli.refuse(too_many_nodes(job_nodes(), n));

  const iso::object_type row_type = make_row_type();
  return iso::run(argc, argv, [&](iso::node& node) {
    const auto size = static_cast<std::size_t>(n);
    const std::size_t w = size + 2;
    const std::uint32_t nodes = node.count();
    const std::uint32_t me = node.id();
    if (nodes > size) throw iso::error(iso::error_code::invalid_argument, too_many_nodes(nodes, n));
    const block_range own = block_of(size, nodes, me);  // interior rows own.begin + 1 ...
    const std::size_t h = own.size();

    // Boundary b lies between nodes b and b + 1: `down[b]` carries b's last row to b + 1,
    // `up[b]` carries b + 1's first row to b. Created collectively, in one order everywhere.
    auto border = [&](iso::node_id reader) {
      iso::object_options options;
      options.placement =
          single_copy ? iso::object_placement::single_copy : iso::object_placement::replicated;
      options.owner = reader;
      return iso::object(node, row_type, options);
    };
    std::vector<iso::object> down, up;
    for (std::uint32_t b = 0; b + 1 < nodes; ++b) {
      down.push_back(border(b + 1));
      up.push_back(border(b));
    }

    std::vector<double> grid((h + 2) * w, 0.0);
    if (me == 0) std::fill_n(grid.begin(), w, 1.0);  // the hot top edge
    const std::span<const double> first_row = std::span(grid).subspan(w, w);
    const std::span<const double> last_row = std::span(grid).subspan(h * w, w);
    const std::span<double> ghost_above = std::span(grid).first(w);
    const std::span<double> ghost_below = std::span(grid).subspan((h + 1) * w, w);
    phase_timer timer;
    node.barrier();
    const stopwatch clock;
    // The puts of the last half-sweep, whose results are taken only before the next puts:
    // the row is in the reader's copy once the reader's get returns, whatever became of
    // the reply, and waiting for the reply at once cost a neighbour's whole sweep per
    // half-sweep (see the README).
    iso::pending<void> to_above, to_below;
    auto finish_puts = [&] {
      if (to_above.valid()) to_above.get();
      if (to_below.valid()) to_below.get();
    };
    std::uint64_t half_sweep = 0;
    for (long it = 0; it < iterations; ++it) {
      for (unsigned colour = 0; colour < 2; ++colour, ++half_sweep) {
        timer.enter("relax");
        sor::relax(grid, size, own.begin + 1, colour);
        if (nodes == 1) continue;
        const slot_key key{half_sweep % 2, half_sweep};
        // Both puts are on their way before this node waits for its neighbours' rows.
        timer.enter("put rows");
        finish_puts();
        if (me > 0) to_above = put_row(up[me - 1], key, first_row);
        if (me + 1 < nodes) to_below = put_row(down[me], key, last_row);
        timer.enter("get rows");
        if (me > 0) get_row(down[me - 1], key, ghost_above);
        if (me + 1 < nodes) get_row(up[me], key, ghost_below);
      }
    }
    timer.enter("put rows");
    finish_puts();
    const double seconds = clock.seconds();
    timer.stop();
    if (phases) std::printf("sor-orca: node %u: %s\n", me, timer.summary().c_str());
    if (me == 0) {
      print_size("sor-orca", format("%ld x %ld interior, %ld iterations", n, n, iterations), nodes);
      print_time("sor-orca", seconds, "iterations");
    }
    if (!check) {
      if (me == 0) print_check_skipped("sor-orca");
      return;
    }
    // Every node's rows go to node 0 (slot: the global row, stamp 0).
    iso::object result(node, row_type,
                       {.placement = iso::object_placement::single_copy, .owner = 0});
    if (me != 0) {
      // A few puts in flight at a time, not the whole block's worth of requests at once.
      constexpr std::size_t kInFlight = 16;
      std::deque<iso::pending<void>> puts;
      for (std::size_t r = 1; r <= h; ++r) {
        if (puts.size() == kInFlight) {
          puts.front().get();
          puts.pop_front();
        }
        puts.push_back(put_row(result, {own.begin + r, 0}, std::span(grid).subspan(r * w, w)));
      }
      for (iso::pending<void>& p : puts) p.get();
      return;
    }
    std::vector<double> got(w * w, 0.0);
    std::copy_n(grid.begin(), (h + 1) * w, got.begin());  // the top edge and node 0's rows
    for (std::size_t row = own.end + 1; row <= size; ++row)
      get_row(result, {row, 0}, std::span(got).subspan(row * w, w));
    std::vector<double> want(w * w);
    sor::set_edges(want, size);
    sor::solve(want, size, iterations);
    check_result outcome{true, ""};
    for (std::size_t i = 0; outcome.passed && i < want.size(); ++i) {
      if (!identical(got[i], want[i])) {
        outcome = {false, format("first difference from the sequential grid at row %zu, column "
                                 "%zu: %.17g != %.17g",
                                 i / w, i % w, got[i], want[i])};
      }
    }
    if (outcome.passed) {
      const sor::summary s = sor::summarize(got, size);
      outcome.detail = format("heat %.17g, residual %.3g; grid identical to the sequential one",
                              s.heat, s.residual);
    }
    print_check("sor-orca", outcome);
    if (!outcome.passed) throw iso::error(iso::error_code::data_loss, "sor-orca: the check failed");
  });
}
