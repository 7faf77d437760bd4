// fft: a 1-D complex FFT of 2^m points, six-step with blocked transposes (after SPLASH-2's
// FFT), forward then inverse, on one-sided windows (iso/window.hpp).
//
// The points form a rows x cols matrix; every node owns a block of rows, in its window, and
// transforms them in place. Between the row steps the matrix is transposed: each node puts
// its rows' columns straight into their new owners' windows (one put per destination row)
// and copies its own part, a fence makes its puts land and a barrier orders them before
// anybody reads. Two windows alternate, so no node puts into rows another node may still be
// reading: a window's rows are read (transformed, then packed for the next transpose) only
// before the barrier that ends the transpose out of it.
//
// Through isotach memory instead (every point two 64-bit variables, written into the
// owners' copies, read back by the owners), the transposes cost more than a third of the
// time on 2 nodes (1.59x the sequential version).
//
//   isorun -n 2 -- fft --m 20 --check
#include <algorithm>
#include <array>
#include <bit>
#include <cstdio>
#include <iso/iso.hpp>
#include <optional>
#include <span>
#include <vector>

#include "apps/common/command_line.hpp"
#include "apps/common/partition.hpp"
#include "apps/common/report.hpp"
#include "apps/common/shared_blocks.hpp"
#include "apps/common/window_blocks.hpp"
#include "apps/fft/fft_check.hpp"
#include "apps/fft/fft_kernel.hpp"

namespace {

using iso::apps::block_of;
using iso::apps::block_range;
using iso::apps::fft::cplx;

// std::complex<double> is laid out as double[2] and may be accessed so: blocks move
// between private rows and isotach memory without a copy.
std::span<const double> as_doubles(std::span<const cplx> v) {
  return {reinterpret_cast<const double*>(v.data()), 2 * v.size()};
}
std::span<double> as_doubles(std::span<cplx> v) {
  return {reinterpret_cast<double*>(v.data()), 2 * v.size()};
}

// The two windows the matrix moves between, each with room for the largest block of rows
// either shape gives a node.
struct matrix_windows {
  std::array<iso::window, 2> windows;

  // This node's block of `count` points in window `which`.
  std::span<cplx> own(iso::node& node, unsigned which, std::size_t count) const {
    return iso::apps::window_values<cplx>(node, windows[which], count);
  }
};

// Transposes a rows x cols matrix, of which this node holds rows block_of(rows) in `mine`,
// into window `into`: every node's rows block_of(cols) of the cols x rows result. Each
// column of this node's rows is a run of a destination row: put there, or copied when
// the row is this node's. Returns this node's new rows, once every node's puts landed.
std::span<cplx> transpose(iso::node& node, std::span<const cplx> mine, std::size_t rows,
                          std::size_t cols, const matrix_windows& m, unsigned into,
                          std::vector<cplx>& tile, iso::apps::phase_timer& phases) {
  phases.enter("pack+put");
  constexpr std::size_t kTile = 32;
  const block_range r = block_of(rows, node.count(), node.id());
  const block_range d = block_of(cols, node.count(), node.id());
  const std::size_t h = r.size();
  const std::span<cplx> next = m.own(node, into, d.size() * rows);
  tile.resize(kTile * h);
  iso::node_id owner = 0;
  block_range owned = block_of(cols, node.count(), owner);
  for (std::size_t c0 = 0; c0 < cols; c0 += kTile) {
    const std::size_t c1 = std::min(cols, c0 + kTile);
    for (std::size_t i = 0; i < h; ++i) {
      for (std::size_t c = c0; c < c1; ++c) tile[(c - c0) * h + i] = mine[i * cols + c];
    }
    for (std::size_t c = c0; c < c1; ++c) {
      while (c >= owned.end) owned = block_of(cols, node.count(), ++owner);
      const std::span<const cplx> run = std::span<const cplx>(tile).subspan((c - c0) * h, h);
      const std::size_t at = (c - owned.begin) * rows + r.begin;
      if (owner == node.id()) {
        std::ranges::copy(run, next.begin() + static_cast<std::ptrdiff_t>(at));
      } else {
        iso::apps::put_values(node, m.windows[into], owner, at, run);
      }
    }
  }
  phases.enter("fence");
  node.fence();
  phases.enter("barrier");
  node.barrier();
  phases.enter("compute");
  return next;
}

// Buffers reused across the steps: fresh ones would cost a page fault per 4 KiB.
struct workspace {
  std::vector<cplx> tile;
  iso::apps::phase_timer phases;
};

// The distributed six-step: `mine` holds this node's rows of the rows x cols input; leaves
// its rows of the cols x rows output (natural order) in window `first` and returns them.
// Uses both windows: window 1 - first in between.
std::span<cplx> six_step(iso::node& node, std::span<const cplx> mine, std::size_t rows,
                         std::size_t cols, const matrix_windows& m, unsigned first, workspace& w) {
  const std::size_t n = rows * cols;
  const std::span<cplx> t = transpose(node, mine, rows, cols, m, first, w.tile, w.phases);
  const block_range j2s = block_of(cols, node.count(), node.id());
  const iso::apps::fft::row_fft by_rows(rows);
  for (std::size_t j2 = j2s.begin; j2 < j2s.end; ++j2) {
    iso::apps::fft::fft_and_twiddle(by_rows, n, j2, t.subspan((j2 - j2s.begin) * rows, rows));
  }
  const std::span<cplx> u = transpose(node, t, cols, rows, m, 1 - first, w.tile, w.phases);
  const iso::apps::fft::row_fft by_cols(cols);
  for (std::size_t k1 = 0; k1 < u.size() / cols; ++k1) {
    by_cols.transform(u.subspan(k1 * cols, cols));
  }
  return transpose(node, u, rows, cols, m, first, w.tile, w.phases);
}

std::string too_many_nodes(unsigned nodes, std::size_t rows, long m) {
  return iso::apps::format(
      "%u nodes are more than the %zu rows of 2^%ld points (use --m %d or more)", nodes, rows, m,
      2 * std::bit_width(nodes - 1U));
}

}  // namespace

int main(int argc, char** argv) {
  using namespace iso::apps;
  long m = 16;
  long seed = 1;
  bool check = false;
  bool phases = false;
  command_line cli("fft", "1-D complex FFT of 2^m points, six-step, forward then inverse");
  cli.add_count("--m", m, 2, 26, "log2 of the number of points");
  cli.add_count("--seed", seed, 0, 1'000'000'000, "seed of the input");
  cli.add_switch("--check", check,
                 "check against the sequential version, the round trip and "
                 "the checksum");
  cli.add_switch("--phases", phases, "print where each node's time goes");
  if (std::optional<int> status = cli.parse(argc, argv)) return *status;
  const fft::shape s = fft::shape_of(static_cast<unsigned>(m));
  if (job_nodes() > s.rows) return cli.refuse(too_many_nodes(job_nodes(), s.rows, m));

  return iso::run(argc, argv, [&](iso::node& node) {
    const std::size_t rows = s.rows;
    const std::size_t cols = s.cols;
    const std::size_t n = rows * cols;
    if (node.count() > rows) {
      throw iso::error(iso::error_code::invalid_argument, too_many_nodes(node.count(), rows, m));
    }
    const block_range in_rows = block_of(rows, node.count(), node.id());
    const block_range out_rows = block_of(cols, node.count(), node.id());
    const std::vector<cplx> x = fft::make_input(static_cast<std::uint64_t>(seed),
                                                in_rows.begin * cols, in_rows.size() * cols);
    // Room for node 0's block, the largest, of either shape.
    const std::size_t block_points = std::max(block_of(rows, node.count(), 0).size() * cols,
                                              block_of(cols, node.count(), 0).size() * rows);
    const matrix_windows blocks{.windows = {node.register_window(block_points * sizeof(cplx)),
                                            node.register_window(block_points * sizeof(cplx))}};

    // Touch every buffer before the clock starts: a first touch costs a page fault per
    // 4 KiB, set-up rather than transform.
    workspace w;
    std::vector<cplx> in(out_rows.size() * rows);
    std::ranges::fill(blocks.own(node, 0, block_points), cplx{});
    std::ranges::fill(blocks.own(node, 1, block_points), cplx{});
    node.barrier();
    const stopwatch clock;
    w.phases.enter("compute");
    // Forward into window 0; the inverse starts in window 1, which nobody reads any more
    // once the forward transform's last transpose is over, and ends in it. It passes
    // through window 0 as well: the forward result lives on in `in`, conjugated.
    {
      const std::span<const cplx> forward = six_step(node, x, rows, cols, blocks, 0, w);
      std::transform(forward.begin(), forward.end(), in.begin(), fft::before_inverse);
    }
    const std::span<cplx> back = six_step(node, in, cols, rows, blocks, 1, w);
    for (cplx& v : back) v = fft::after_inverse(v, n);
    node.barrier();
    const double seconds = clock.seconds();
    w.phases.stop();
    if (phases) std::printf("fft: node %u: %s\n", node.id(), w.phases.summary().c_str());

    if (node.id() == 0) {
      print_size("fft", format("2^%ld points (%zu x %zu)", m, rows, cols), node.count());
      print_time("fft", seconds, "forward and inverse");
    }
    if (!check) {
      if (node.id() == 0) print_check_skipped("fft");
      return;
    }
    // Gather both results in natural order in isotach memory: forward rows in `wide`
    // (cols x rows), back rows in `tall` (rows x cols).
    const auto wide = node.allocate<double>(2 * n, rows_placement(cols, 2 * rows, node));
    const auto tall = node.allocate<double>(2 * n, rows_placement(rows, 2 * cols, node));
    {
      write_batch out(node);
      std::vector<cplx> forward(in.size());
      std::transform(in.begin(), in.end(), forward.begin(), [](cplx v) { return std::conj(v); });
      out.write(wide, 2 * out_rows.begin * rows, as_doubles(std::span<const cplx>(forward)));
      out.write(tall, 2 * in_rows.begin * cols, as_doubles(std::span<const cplx>(back)));
    }
    node.barrier();
    if (node.id() != 0) return;
    std::vector<cplx> all_forward(n);
    read_into(node, wide, 0, as_doubles(std::span<cplx>(all_forward)));
    std::vector<cplx> all_back(n);
    read_into(node, tall, 0, as_doubles(std::span<cplx>(all_back)));

    const std::vector<cplx> all_x = fft::make_input(static_cast<std::uint64_t>(seed), 0, n);
    const std::vector<cplx> want_forward = fft::six_step(all_x, rows, cols);
    const std::vector<cplx> want_back = fft::inverse_six_step(want_forward, rows, cols);
    check_result result = fft::compare_exactly(all_forward, want_forward, "forward transform");
    if (result.passed) result = fft::compare_exactly(all_back, want_back, "inverse transform");
    if (result.passed) result = fft::check_round_trip(all_x, all_forward, all_back);
    print_check("fft", result);
    if (!result.passed) throw iso::error(iso::error_code::data_loss, "fft: the check failed");
  });
}
