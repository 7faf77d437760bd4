// fft: a 1-D complex FFT of 2^m points on isotach shared memory, six-step with blocked
// transposes (after SPLASH-2's FFT), forward then inverse.
//
// The points form a rows x cols matrix; every node owns a block of rows and transforms
// them in private memory. Between the row steps the matrix is transposed through isotach
// memory: each node writes its rows' columns straight into the owners' pages (one block
// write per destination row, batched into few isochrons), a barrier orders the writes
// before the reads, and each node reads its new rows from its own copy. Two shared arrays
// alternate, so no node writes into rows another node may still be reading.
//
//   isorun -n 2 -- fft --m 20 --check
#include <algorithm>
#include <bit>
#include <cstdio>
#include <iso/iso.hpp>
#include <optional>

#include "apps/common/command_line.hpp"
#include "apps/common/partition.hpp"
#include "apps/common/report.hpp"
#include "apps/common/shared_blocks.hpp"
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

// Transposes a rows x cols matrix, of which this node holds rows block_of(rows) in `mine`,
// into `next`: its rows block_of(cols) of the cols x rows result. The parts other nodes
// own go through `target` (cols x rows): a block write per destination row (the run of
// this node's rows in that column), batched into few isochrons; a barrier orders them
// before every node reads its new rows from its own copy. This node's own part moves in
// private memory, and only the others' parts are read.
void transpose(iso::node& node, std::span<const cplx> mine, std::size_t rows, std::size_t cols,
               iso::shared_array<double> target, std::vector<cplx>& tile, std::vector<cplx>& next,
               iso::apps::phase_timer& phases) {
  phases.enter("pack+write");
  constexpr std::size_t kTile = 32;
  const block_range r = block_of(rows, node.count(), node.id());
  const block_range d = block_of(cols, node.count(), node.id());
  const std::size_t h = r.size();
  tile.resize(kTile * h);
  {
    iso::apps::write_batch out(node);
    for (std::size_t c0 = 0; c0 < cols; c0 += kTile) {
      const std::size_t c1 = std::min(cols, c0 + kTile);
      if (c0 >= d.begin && c1 <= d.end) continue;  // all ours
      for (std::size_t i = 0; i < h; ++i) {
        for (std::size_t c = c0; c < c1; ++c) tile[(c - c0) * h + i] = mine[i * cols + c];
      }
      for (std::size_t c = c0; c < c1; ++c) {
        if (c >= d.begin && c < d.end) continue;
        out.write(target, 2 * (c * rows + r.begin),
                  as_doubles(std::span<const cplx>(tile).subspan((c - c0) * h, h)));
      }
    }
  }
  phases.enter("barrier");
  node.barrier();
  phases.enter("read");
  // Each new row is [other nodes' part | this node's part | other nodes' part].
  next.resize(d.size() * rows);
  iso::apps::read_batch<double> in(node);
  for (std::size_t c = d.begin; c < d.end; ++c) {
    const std::span<double> row = as_doubles(std::span(next).subspan((c - d.begin) * rows, rows));
    in.read(target, 2 * c * rows, row.first(2 * r.begin));
    in.read(target, 2 * (c * rows + r.end), row.subspan(2 * r.end));
  }
  in.wait();
  phases.enter("own part");
  for (std::size_t c0 = d.begin; c0 < d.end; c0 += kTile) {
    const std::size_t c1 = std::min(d.end, c0 + kTile);
    for (std::size_t i = 0; i < h; ++i) {
      for (std::size_t c = c0; c < c1; ++c)
        next[(c - d.begin) * rows + r.begin + i] = mine[i * cols + c];
    }
  }
  phases.enter("compute");
}

// Buffers reused across the steps: fresh ones would cost a page fault per 4 KiB.
struct workspace {
  std::vector<cplx> tile;
  std::vector<cplx> t;
  std::vector<cplx> u;
  iso::apps::phase_timer phases;
};

// The distributed six-step: `mine` holds this node's rows of the rows x cols input; leaves
// its rows of the cols x rows output (natural order) in `out`. `wide` is cols x rows,
// `tall` rows x cols.
void six_step(iso::node& node, std::span<const cplx> mine, std::size_t rows, std::size_t cols,
              iso::shared_array<double> wide, iso::shared_array<double> tall, workspace& w,
              std::vector<cplx>& out) {
  const std::size_t n = rows * cols;
  transpose(node, mine, rows, cols, wide, w.tile, w.t, w.phases);
  const block_range j2s = block_of(cols, node.count(), node.id());
  const iso::apps::fft::row_fft by_rows(rows);
  for (std::size_t j2 = j2s.begin; j2 < j2s.end; ++j2) {
    iso::apps::fft::fft_and_twiddle(by_rows, n, j2,
                                    std::span(w.t).subspan((j2 - j2s.begin) * rows, rows));
  }
  transpose(node, w.t, cols, rows, tall, w.tile, w.u, w.phases);
  const iso::apps::fft::row_fft by_cols(cols);
  for (std::size_t k1 = 0; k1 < w.u.size() / cols; ++k1) {
    by_cols.transform(std::span(w.u).subspan(k1 * cols, cols));
  }
  transpose(node, w.u, rows, cols, wide, w.tile, out, w.phases);
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
    // wide: cols x rows (the first transpose's target and the output), tall: rows x cols.
    const auto wide = node.allocate<double>(2 * n, rows_placement(cols, 2 * rows, node));
    const auto tall = node.allocate<double>(2 * n, rows_placement(rows, 2 * cols, node));
    const block_range in_rows = block_of(rows, node.count(), node.id());
    const std::vector<cplx> x = fft::make_input(static_cast<std::uint64_t>(seed),
                                                in_rows.begin * cols, in_rows.size() * cols);

    // Touch every buffer and this node's pages of isotach memory before the clock starts:
    // a first touch costs a page fault per 4 KiB, set-up rather than transform.
    workspace w;
    std::vector<cplx> forward(block_of(cols, node.count(), node.id()).size() * rows);
    std::vector<cplx> in(forward.size());
    std::vector<cplx> back(x.size());
    w.t.resize(std::max(forward.size(), x.size()));
    w.u.resize(w.t.size());
    {
      write_batch out(node);
      out.write(wide, 2 * block_of(cols, node.count(), node.id()).begin * rows,
                as_doubles(std::span<const cplx>(forward)));
      out.write(tall, 2 * in_rows.begin * cols, as_doubles(std::span<const cplx>(back)));
    }
    node.barrier();
    const stopwatch clock;
    w.phases.enter("compute");
    six_step(node, x, rows, cols, wide, tall, w, forward);
    std::transform(forward.begin(), forward.end(), in.begin(), fft::before_inverse);
    six_step(node, in, cols, rows, tall, wide, w, back);
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
    // Gather both results in natural order: forward rows of `wide`, back rows of `tall`.
    {
      write_batch out(node);
      const block_range f = block_of(cols, node.count(), node.id());
      out.write(wide, 2 * f.begin * rows, as_doubles(std::span<const cplx>(forward)));
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
