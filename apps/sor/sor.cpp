// sor: red-black successive over-relaxation on isotach shared memory (after SPLASH-2's
// Ocean, whose solver is a red-black SOR/multigrid over a grid of rows).
//
// Every node owns a block of interior rows in private memory, with a ghost row above and
// below. After each colour's sweep it writes its first and last rows into an edge array
// (each row's pages on the neighbour that reads it), a barrier orders the writes, and it
// reads its neighbours' rows into its ghost rows from its own copy. Two sets of edge rows
// alternate between sweeps: a node writes set s % 2 only after the barrier of sweep s - 1,
// which every node passes only after reading set s % 2 of sweep s - 2.
//
//   isorun -n 2 -- sor --n 1024 --iterations 200 --check
#include <algorithm>
#include <cstdio>
#include <iso/iso.hpp>
#include <optional>
#include <vector>

#include "apps/common/command_line.hpp"
#include "apps/common/partition.hpp"
#include "apps/common/report.hpp"
#include "apps/common/shared_blocks.hpp"
#include "apps/sor/sor_kernel.hpp"

namespace {

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
  command_line cli("sor", "red-black SOR on an n x n grid, hot top edge, block rows per node");
  cli.add_count("--n", n, 2, 16384, "interior rows and columns");
  cli.add_count("--iterations", iterations, 1, 1'000'000, "red and black sweeps");
  cli.add_switch("--check", check, "compare the grid with the sequential version's, bit for bit");
  cli.add_switch("--phases", phases, "print where each node's time goes");
  if (std::optional<int> status = cli.parse(argc, argv)) return *status;
  if (job_nodes() > static_cast<unsigned long>(n))
    return cli.refuse(too_many_nodes(job_nodes(), n));

  return iso::run(argc, argv, [&](iso::node& node) {
    const auto size = static_cast<std::size_t>(n);
    const std::size_t w = size + 2;
    const std::uint32_t nodes = node.count();
    const std::uint32_t me = node.id();
    if (nodes > size) throw iso::error(iso::error_code::invalid_argument, too_many_nodes(nodes, n));
    const block_range own = block_of(size, nodes, me);  // interior rows own.begin + 1 ...
    const std::size_t h = own.size();

    // Edge rows: (set, node, 0 = its first row / 1 = its last row), each padded to whole
    // pages and placed on the node that reads it, so that reads are of its own copy.
    const std::size_t page_vars = node.options().page_variables;
    const std::size_t stride = (w + page_vars - 1) / page_vars * page_vars;
    const auto edges = node.allocate<double>(
        2 * nodes * 2 * stride, iso::placement::per_page([=](std::uint64_t page) {
          const std::size_t row = page * page_vars / stride;
          const std::size_t p = (row / 2) % nodes;
          const bool last = row % 2 == 1;
          const std::size_t reader =
              last ? std::min<std::size_t>(p + 1, nodes - 1) : (p == 0 ? 0 : p - 1);
          return std::vector<iso::node_id>{static_cast<iso::node_id>(reader)};
        }));
    auto edge = [&](std::size_t set, std::size_t p, std::size_t which) {
      return ((set * nodes + p) * 2 + which) * stride;
    };

    std::vector<double> grid((h + 2) * w, 0.0);
    if (me == 0) std::fill_n(grid.begin(), w, 1.0);  // the hot top edge
    const std::span<double> first_row = std::span(grid).subspan(w, w);
    const std::span<double> last_row = std::span(grid).subspan(h * w, w);
    phase_timer timer;
    node.barrier();
    const stopwatch clock;
    for (long it = 0; it < iterations; ++it) {
      for (unsigned colour = 0; colour < 2; ++colour) {
        const std::size_t set = colour;  // sweeps alternate colours, so sets alternate too
        timer.enter("relax");
        sor::relax(grid, size, own.begin + 1, colour);
        timer.enter("write edges");
        if (nodes > 1) {
          iso::isochron iso(node);
          if (me > 0) iso.write(edges, edge(set, me, 0), std::span<const double>(first_row));
          if (me + 1 < nodes) iso.write(edges, edge(set, me, 1), std::span<const double>(last_row));
        }
        timer.enter("barrier");
        if (nodes > 1) node.barrier();
        timer.enter("read edges");
        if (nodes > 1) {
          read_batch<double> in(node);
          if (me > 0) in.read(edges, edge(set, me - 1, 1), std::span(grid).first(w));
          if (me + 1 < nodes)
            in.read(edges, edge(set, me + 1, 0), std::span(grid).subspan((h + 1) * w, w));
          in.wait();
        }
      }
    }
    node.barrier();
    const double seconds = clock.seconds();
    timer.stop();
    if (phases) std::printf("sor: node %u: %s\n", me, timer.summary().c_str());
    if (me == 0) {
      print_size("sor", format("%ld x %ld interior, %ld iterations", n, n, iterations), nodes);
      print_time("sor", seconds, "iterations");
    }
    if (!check) {
      if (me == 0) print_check_skipped("sor");
      return;
    }
    const auto result = node.allocate<double>(w * w, iso::placement::on(0));
    {
      write_batch out(node);
      out.write(result, (own.begin + 1) * w, std::span<const double>(grid).subspan(w, h * w));
    }
    node.barrier();
    if (me != 0) return;
    std::vector<double> got(w * w);
    read_into(node, result, 0, std::span(got));
    std::fill_n(got.begin(), w, 1.0);  // the edges, which no node writes
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
    print_check("sor", outcome);
    if (!outcome.passed) throw iso::error(iso::error_code::data_loss, "sor: the check failed");
  });
}
