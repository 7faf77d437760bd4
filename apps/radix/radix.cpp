// radix: an integer radix sort of 32-bit keys (after SPLASH-2's RADIX), with a parallel
// prefix over per-node histograms in isotach shared memory, and the keys moved between the
// nodes' blocks with one-sided puts (iso/window.hpp), as SPLASH-2's processors store each key
// straight into its place in the shared array.
//
// Every node holds a block of the key array in its window. Per pass (one digit):
//   1. count its keys per digit and write the counts into its row of the histogram table,
//      an isotach array with a copy on every node; a barrier;
//   2. from its copy of every node's counts, compute where its keys of each digit start:
//      the keys with smaller digits anywhere, plus those with its digit on lower nodes;
//   3. stably move each of its keys to its place: in its own block straight there, and in
//      another's into a staging buffer, ordered by digit, whose runs it then puts into the
//      blocks they land in; a fence, so that its puts have landed, and a barrier, after
//      which every node's block holds its keys for the next pass.
// The blocks alternate between two windows: a pass reads one and puts into the other, so
// a node still reading its keys is never written to by a node that has moved on (the
// barrier that ends a pass separates a window's last reads from the next pass's puts into
// it).
//
// Through isotach memory instead (every key a block write into its owner's copy, read back
// by the owner), the exchange cost more than the sort: 0.72x the sequential version on 2
// nodes. The puts move a key as its 4 bytes, and only the keys bound for other nodes: 1.66x.
//
//   isorun -n 2 -- radix --keys 4194304 --check

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
#include "apps/radix/radix_kernel.hpp"

namespace {

using iso::apps::block_of;
using iso::apps::block_range;
constexpr std::size_t kParts = iso::apps::radix::kPartsPerDigit;

// Keys of one digit bound for other nodes' blocks: `count` keys from `staged` in the
// staging buffer, to positions [global, global + count) of the key array.
struct remote_run {
  std::size_t staged = 0;
  std::size_t count = 0;
  std::size_t global = 0;
};

// What one node keeps across passes: buffers touched once.
struct workspace {
  std::vector<std::uint32_t> staged;              // its keys bound elsewhere, ordered by digit
  std::vector<std::uint32_t> counts;              // per digit, this node
  std::vector<std::uint32_t> table;               // per node and digit, every node
  std::vector<std::uint32_t> global;              // where each digit's run starts in the key array
  std::vector<iso::apps::radix::run_part> parts;  // where each digit's keys go
  std::vector<remote_run> remote;                 // what to put where
  iso::apps::phase_timer phases;
};

// The key array: node p's block (block_of) at the start of its window, in two windows that
// passes use in turn.
struct key_blocks {
  std::size_t keys = 0;
  std::array<iso::window, 2> windows;

  // The keys of this node's block in window `which`.
  std::span<std::uint32_t> own(iso::node& node, unsigned which) const {
    return iso::apps::window_values<std::uint32_t>(node, windows[which],
                                                   block_of(keys, node.count(), node.id()).size());
  }
};

// Puts `run`, keys of other nodes' blocks, at positions [first, first + run.size()) of the
// key array in window `which`.
void put_run(iso::node& node, const key_blocks& blocks, unsigned which, std::size_t first,
             std::span<const std::uint32_t> run) {
  const std::size_t last = first + run.size();
  for (iso::node_id p = 0; p < node.count(); ++p) {
    const block_range b = block_of(blocks.keys, node.count(), p);
    const std::size_t from = std::max(first, b.begin);
    const std::size_t to = std::min(last, b.end);
    if (from >= to) continue;
    iso::apps::put_values(node, blocks.windows[which], p, from - b.begin,
                          run.subspan(from - first, to - from));
  }
}

void sort_pass(iso::node& node, unsigned pass, unsigned bits, const key_blocks& blocks,
               iso::shared_array<std::uint32_t> histograms, workspace& w) {
  const std::size_t radix = std::size_t{1} << bits;
  const std::uint32_t me = node.id();
  const unsigned into = pass % 2;
  const std::span<const std::uint32_t> mine = blocks.own(node, 1 - into);

  w.phases.enter("count");
  iso::apps::radix::count_digits(mine, pass, bits, w.counts);
  {
    iso::isochron iso(node);
    iso.write(histograms, me * radix, std::span<const std::uint32_t>(w.counts));
  }
  w.phases.enter("barrier");
  node.barrier();
  w.phases.enter("prefix");
  iso::apps::read_into(node, histograms, 0, std::span(w.table));
  std::uint32_t start = 0;
  for (std::size_t d = 0; d < radix; ++d) {
    std::uint32_t total = 0;
    std::uint32_t below = 0;
    for (std::uint32_t p = 0; p < node.count(); ++p) {
      total += w.table[p * radix + d];
      if (p < me) below += w.table[p * radix + d];
    }
    w.global[d] = start + below;
    start += total;
  }
  // Digit d's run: the keys before this node's block and those after it are staged (in
  // that order, packed), those inside go straight to their place there.
  const block_range own = block_of(blocks.keys, node.count(), me);
  const std::span<std::uint32_t> next = blocks.own(node, into);
  w.remote.clear();
  std::size_t staged = 0;
  for (std::size_t d = 0; d < radix; ++d) {
    const std::size_t first = w.global[d];
    const std::size_t last = first + w.counts[d];
    const std::size_t before = std::min(last, std::max(first, own.begin)) - first;
    const std::size_t after = last - std::max(first, std::min(last, own.end));
    const std::size_t inside = w.counts[d] - before - after;
    w.parts[kParts * d] = {w.staged.data() + staged, static_cast<std::uint32_t>(before)};
    w.parts[kParts * d + 1] = {
        inside == 0 ? nullptr : next.data() + (std::max(first, own.begin) - own.begin),
        static_cast<std::uint32_t>(inside)};
    w.parts[kParts * d + 2] = {w.staged.data() + staged + before,
                               static_cast<std::uint32_t>(after)};
    if (before != 0) w.remote.push_back({staged, before, first});
    if (after != 0) w.remote.push_back({staged + before, after, last - after});
    staged += before + after;
  }
  w.phases.enter("local sort");
  iso::apps::radix::scatter_parts(mine, pass, bits, w.parts);

  w.phases.enter("put");
  for (const remote_run& r : w.remote) {
    put_run(node, blocks, into, r.global,
            std::span<const std::uint32_t>(w.staged).subspan(r.staged, r.count));
  }
  w.phases.enter("fence");
  node.fence();
  w.phases.enter("barrier");
  node.barrier();
  w.phases.enter("count");
}

std::string too_many_nodes(unsigned nodes, long keys) {
  return iso::apps::format("%u nodes are more than the %ld keys (use --keys %u or more)", nodes,
                           keys, nodes);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace iso::apps;
  long keys = 1 << 20;
  long radix = 256;
  long seed = 1;
  bool check = false;
  bool phases = false;
  command_line cli("radix", "radix sort of 32-bit keys, prefix over per-node histograms");
  cli.add_count("--keys", keys, 1, 1L << 28, "number of keys");
  cli.add_count("--radix", radix, 2, 65536, "buckets per pass", true);
  cli.add_count("--seed", seed, 0, 1'000'000'000, "seed of the input");
  cli.add_switch("--check", check,
                 "check that the result is sorted, a permutation of the "
                 "input and equal to the sequential version's");
  cli.add_switch("--phases", phases, "print where each node's time goes");
  if (std::optional<int> status = cli.parse(argc, argv)) return *status;
  if (job_nodes() > static_cast<unsigned long>(keys)) {
    return cli.refuse(too_many_nodes(job_nodes(), keys));
  }
  const unsigned bits = static_cast<unsigned>(std::countr_zero(static_cast<unsigned long>(radix)));

  return iso::run(argc, argv, [&](iso::node& node) {
    const std::size_t n = static_cast<std::size_t>(keys);
    if (node.count() > n) {
      throw iso::error(iso::error_code::invalid_argument, too_many_nodes(node.count(), keys));
    }
    const auto histograms = node.allocate<std::uint32_t>(
        node.count() * static_cast<std::size_t>(radix), iso::placement::everywhere());
    const block_range own = block_of(n, node.count(), node.id());
    // Every node's window is as large as the largest block (node 0's).
    const std::size_t block_bytes = block_of(n, node.count(), 0).size() * sizeof(std::uint32_t);
    const key_blocks blocks{
        .keys = n,
        .windows = {node.register_window(block_bytes), node.register_window(block_bytes)}};
    workspace w;
    w.staged.resize(own.size());
    w.counts.resize(static_cast<std::size_t>(radix));
    w.global.resize(w.counts.size());
    w.parts.resize(kParts * w.counts.size());
    w.table.resize(node.count() * w.counts.size());
    // Pass 0 reads window 1. Both windows' pages are touched before the clock starts.
    const std::vector<std::uint32_t> input =
        radix::make_input(static_cast<std::uint64_t>(seed), own.begin, own.size());
    std::ranges::copy(input, blocks.own(node, 1).begin());
    std::ranges::fill(blocks.own(node, 0), 0U);
    std::ranges::fill(w.staged, 0U);
    node.barrier();
    const stopwatch clock;
    const unsigned passes = radix::passes(bits);
    for (unsigned pass = 0; pass < passes; ++pass) {
      sort_pass(node, pass, bits, blocks, histograms, w);
    }
    node.barrier();
    const double seconds = clock.seconds();
    w.phases.stop();
    if (phases) std::printf("radix: node %u: %s\n", node.id(), w.phases.summary().c_str());
    if (node.id() == 0) {
      print_size("radix",
                 format("%ld keys, radix %ld (%u passes)", keys, radix, radix::passes(bits)),
                 node.count());
      print_time("radix", seconds, "sort");
    }
    if (!check) {
      if (node.id() == 0) print_check_skipped("radix");
      return;
    }
    // Node 0 checks the whole array: every node's block, gathered in isotach memory.
    const auto shared_keys = node.allocate<std::uint32_t>(n, rows_placement(n, 1, node));
    {
      write_batch out(node);
      out.write(shared_keys, own.begin,
                std::span<const std::uint32_t>(blocks.own(node, (passes - 1) % 2)));
    }
    node.barrier();
    if (node.id() != 0) return;
    std::vector<std::uint32_t> sorted(n);
    read_into(node, shared_keys, 0, std::span(sorted));
    std::vector<std::uint32_t> want = radix::make_input(static_cast<std::uint64_t>(seed), 0, n);
    check_result result = radix::check_sorted(sorted, radix::multiset_digest(want));
    std::vector<std::uint32_t> scratch(n);
    radix::sort(want, scratch, bits);
    for (std::size_t i = 0; result.passed && i < n; ++i) {
      if (sorted[i] != want[i]) {
        result = {false, format("first difference from the sequential sort at key %zu: %u != %u", i,
                                sorted[i], want[i])};
      }
    }
    print_check("radix", result);
    if (!result.passed) throw iso::error(iso::error_code::data_loss, "radix: the check failed");
  });
}
