// lu: blocked dense LU factorization without pivoting on isotach shared memory (after
// SPLASH-2's LU), of a diagonally dominant matrix.
//
// Block columns are dealt to the nodes round robin (column j on node j mod P) and stay in
// each owner's private memory. Step k: the owner of column k factors its diagonal block and
// column panel and writes the panel (blocks k..nb-1 of column k) into a shared array with a
// copy on every node, as few block writes; a barrier; every other node reads the panel from
// its own copy and updates its columns right of k. Two panel arrays alternate: a node
// writes panel k only after the barrier of step k-1, which every node passes only after
// reading panel k-2 from the same array.
//
//   isorun -n 2 -- lu --n 1024 --block 32 --check
#include <array>
#include <cstdio>
#include <iso/iso.hpp>
#include <optional>

#include "apps/common/command_line.hpp"
#include "apps/common/report.hpp"
#include "apps/common/shared_blocks.hpp"
#include "apps/lu/lu_kernel.hpp"

namespace {

std::string too_many_nodes(unsigned nodes, long n, long b) {
  return iso::apps::format(
      "%u nodes are more than the %ld block columns of --n %ld --block %ld "
      "(use a smaller --block)",
      nodes, n / b, n, b);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace iso::apps;
  long n = 256;
  long b = 32;
  long seed = 1;
  bool check = false;
  bool phases = false;
  command_line cli("lu", "blocked LU factorization without pivoting, block columns round robin");
  cli.add_count("--n", n, 1, 8192, "rows and columns of the matrix");
  cli.add_count("--block", b, 1, 512, "rows and columns of a block");
  cli.add_count("--seed", seed, 0, 1'000'000'000, "seed of the matrix");
  cli.add_switch("--check", check,
                 "check ||LU - A|| / ||A|| and compare with the sequential "
                 "version");
  cli.add_switch("--phases", phases, "print where each node's time goes");
  if (std::optional<int> status = cli.parse(argc, argv)) return *status;
  if (n % b != 0) return cli.refuse(format("--n %ld is not a multiple of --block %ld", n, b));
  if (job_nodes() > static_cast<unsigned long>(n / b)) {
    return cli.refuse(too_many_nodes(job_nodes(), n, b));
  }

  return iso::run(argc, argv, [&](iso::node& node) {
    const auto size = static_cast<std::size_t>(n);
    const auto block = static_cast<std::size_t>(b);
    const std::size_t nb = size / block;
    const std::size_t bb = block * block;
    const std::size_t column_size = nb * bb;
    const std::uint32_t nodes = node.count();
    if (nodes > nb)
      throw iso::error(iso::error_code::invalid_argument, too_many_nodes(nodes, n, b));
    const std::array<iso::shared_array<double>, 2> panels = {
        node.allocate<double>(column_size, iso::placement::everywhere()),
        node.allocate<double>(column_size, iso::placement::everywhere())};

    // This node's block columns j = id, id + P, ...; columns[j / P].
    std::vector<std::vector<double>> columns;
    for (std::size_t j = node.id(); j < nb; j += nodes) {
      columns.emplace_back(column_size);
      lu::make_block_column(static_cast<std::uint64_t>(seed), size, block, j, columns.back());
    }
    std::vector<double> panel(column_size);
    {  // touch this node's copies of the panels before the clock starts
      write_batch out(node);
      if (node.id() == 0) {
        out.write(panels[0], 0, std::span<const double>(panel));
        out.write(panels[1], 0, std::span<const double>(panel));
      }
    }
    phase_timer timer;
    node.barrier();
    const stopwatch clock;
    for (std::size_t k = 0; k < nb; ++k) {
      const bool mine = k % nodes == node.id();
      const std::size_t panel_size = (nb - k) * bb;
      std::span<const double> panel_view;
      if (mine) {
        timer.enter("factor panel");
        std::span<double> column = columns[k / nodes];
        lu::factor_column(column, k, nb, block);
        panel_view = std::span<const double>(column).subspan(k * bb);
        timer.enter("write panel");
        if (nodes > 1) {
          write_batch out(node);
          out.write(panels[k % 2], 0, panel_view);
        }
      }
      timer.enter("barrier");
      node.barrier();
      if (!mine) {
        timer.enter("read panel");
        read_into(node, panels[k % 2], 0, std::span(panel).first(panel_size));
        panel_view = std::span<const double>(panel).first(panel_size);
      }
      timer.enter("update");
      for (std::size_t j = k + 1; j < nb; ++j) {
        if (j % nodes != node.id()) continue;
        lu::update_column(panel_view, columns[j / nodes], k, nb, block);
      }
    }
    node.barrier();
    const double seconds = clock.seconds();
    timer.stop();
    if (phases) std::printf("lu: node %u: %s\n", node.id(), timer.summary().c_str());
    if (node.id() == 0) {
      print_size("lu", format("%ld x %ld, blocks of %ld x %ld", n, n, b, b), nodes);
      print_time("lu", seconds, "factorization");
    }
    if (!check) {
      if (node.id() == 0) print_check_skipped("lu");
      return;
    }
    // Gather the factors on node 0, block column by block column.
    const auto result = node.allocate<double>(size * size, iso::placement::on(0));
    {
      write_batch out(node);
      for (std::size_t j = node.id(); j < nb; j += nodes) {
        out.write(result, j * column_size, std::span<const double>(columns[j / nodes]));
      }
    }
    node.barrier();
    if (node.id() != 0) return;
    std::vector<double> factored(size * size);
    read_into(node, result, 0, std::span(factored));
    std::vector<double> want(size * size);
    for (std::size_t j = 0; j < nb; ++j) {
      lu::make_block_column(static_cast<std::uint64_t>(seed), size, block, j,
                            std::span(want).subspan(j * column_size, column_size));
    }
    const std::vector<double> original = want;
    lu::factor(want, size, block);
    check_result outcome = lu::check_residual(factored, original, size, block);
    for (std::size_t i = 0; outcome.passed && i < want.size(); ++i) {
      if (!identical(factored[i], want[i])) {
        outcome = {false, format("first difference from the sequential factors at element %zu "
                                 "(blocked layout): %.17g != %.17g",
                                 i, factored[i], want[i])};
      }
    }
    if (outcome.passed) outcome.detail += "; identical to the sequential factors";
    print_check("lu", outcome);
    if (!outcome.passed) throw iso::error(iso::error_code::data_loss, "lu: the check failed");
  });
}
