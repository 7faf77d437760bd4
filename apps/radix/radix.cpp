// radix: an integer radix sort of 32-bit keys on isotach shared memory (after SPLASH-2's
// RADIX), with a parallel prefix over per-node histograms.
//
// Every node owns a block of the key array, in pages on that node. Per pass (one digit):
//   1. count its keys per digit and write the counts into its row of the histogram table,
//      which has a copy on every node; a barrier;
//   2. from its copy of every node's counts, compute where its keys of each digit start:
//      the keys with smaller digits anywhere, plus those with its digit on lower nodes;
//   3. stably order its keys by digit, and write each digit's run with one block write
//      into the owners' pages (batched into few isochrons); the part of a run that lands
//      in its own block stays in private memory; a barrier;
//   4. read the rest of its block from its own copy: its keys for the next pass.
// One key array suffices: every node has read its keys (step 4) before the barrier of
// step 1, and nobody writes keys before that barrier.
//
//   isorun -n 2 -- radix --keys 4194304 --check
#include <bit>
#include <cstdio>
#include <iso/iso.hpp>
#include <optional>

#include "apps/common/command_line.hpp"
#include "apps/common/partition.hpp"
#include "apps/common/report.hpp"
#include "apps/common/shared_blocks.hpp"
#include "apps/radix/radix_kernel.hpp"

namespace {

using iso::apps::block_of;
using iso::apps::block_range;

// What one node keeps across passes: buffers touched once.
struct workspace {
  std::vector<std::uint32_t> mine;    // its keys
  std::vector<std::uint32_t> staged;  // its keys ordered by digit
  std::vector<std::uint32_t> next;    // its keys for the next pass
  std::vector<std::uint32_t> counts;  // per digit, this node
  std::vector<std::uint32_t> table;   // per node and digit, every node
  std::vector<std::uint32_t> local;   // where each digit starts in `staged`
  std::vector<std::uint32_t> global;  // where each digit's run starts in the key array
  iso::apps::phase_timer phases;
};

void sort_pass(iso::node& node, unsigned pass, unsigned bits, iso::shared_array<std::uint32_t> keys,
               iso::shared_array<std::uint32_t> histograms, workspace& w) {
  const std::size_t radix = std::size_t{1} << bits;
  const std::uint32_t me = node.id();
  const block_range own = block_of(keys.size(), node.count(), me);

  w.phases.enter("count");
  iso::apps::radix::count_digits(w.mine, pass, bits, w.counts);
  {
    iso::isochron iso(node);
    iso.write(histograms, me * radix, std::span<const std::uint32_t>(w.counts));
  }
  w.phases.enter("barrier");
  node.barrier();
  w.phases.enter("prefix");
  iso::apps::read_into(node, histograms, 0, std::span(w.table));
  std::uint32_t start = 0;
  std::uint32_t local = 0;
  for (std::size_t d = 0; d < radix; ++d) {
    std::uint32_t total = 0;
    std::uint32_t below = 0;
    for (std::uint32_t p = 0; p < node.count(); ++p) {
      total += w.table[p * radix + d];
      if (p < me) below += w.table[p * radix + d];
    }
    w.global[d] = start + below;
    start += total;
    w.local[d] = local;
    local += w.counts[d];
  }
  w.phases.enter("local sort");
  std::vector<std::uint32_t>& next_local = w.counts;  // reused: the counts are in `table`
  std::copy(w.local.begin(), w.local.end(), next_local.begin());
  iso::apps::radix::scatter(w.mine, pass, bits, next_local, w.staged);

  w.phases.enter("write");
  // Runs ascend in position, so the parts in this node's block ascend too; what lies
  // between them is what the others write.
  std::vector<block_range> kept;
  {
    iso::apps::write_batch out(node);
    for (std::size_t d = 0; d < radix; ++d) {
      const std::size_t count = (d + 1 < radix ? w.local[d + 1] : w.mine.size()) - w.local[d];
      if (count == 0) continue;
      const std::span<const std::uint32_t> run =
          std::span<const std::uint32_t>(w.staged).subspan(w.local[d], count);
      const std::size_t first = w.global[d];
      const std::size_t last = first + count;
      if (last <= own.begin || first >= own.end) {
        out.write(keys, first, run);
        continue;
      }
      const std::size_t keep_begin = std::max(first, own.begin);
      const std::size_t keep_end = std::min(last, own.end);
      if (first < keep_begin) out.write(keys, first, run.first(keep_begin - first));
      std::copy_n(run.begin() + static_cast<std::ptrdiff_t>(keep_begin - first),
                  keep_end - keep_begin,
                  w.next.begin() + static_cast<std::ptrdiff_t>(keep_begin - own.begin));
      kept.push_back({keep_begin, keep_end});
      if (keep_end < last) out.write(keys, keep_end, run.subspan(keep_end - first));
    }
  }
  w.phases.enter("barrier");
  node.barrier();
  w.phases.enter("read");
  {
    iso::apps::read_batch<std::uint32_t> in(node);
    std::size_t from = own.begin;
    kept.push_back({own.end, own.end});
    for (const block_range& k : kept) {
      if (from < k.begin) {
        in.read(keys, from, std::span(w.next).subspan(from - own.begin, k.begin - from));
      }
      from = k.end;
    }
    in.wait();
  }
  std::swap(w.mine, w.next);
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
    const auto shared_keys = node.allocate<std::uint32_t>(n, rows_placement(n, 1, node));
    const auto histograms = node.allocate<std::uint32_t>(
        node.count() * static_cast<std::size_t>(radix), iso::placement::everywhere());
    const block_range own = block_of(n, node.count(), node.id());
    workspace w;
    w.mine = radix::make_input(static_cast<std::uint64_t>(seed), own.begin, own.size());
    w.staged.resize(own.size());
    w.next.resize(own.size());
    w.counts.resize(static_cast<std::size_t>(radix));
    w.local.resize(w.counts.size());
    w.global.resize(w.counts.size());
    w.table.resize(node.count() * w.counts.size());
    {  // touch this node's pages of the key array before the clock starts
      write_batch out(node);
      out.write(shared_keys, own.begin, std::span<const std::uint32_t>(w.mine));
    }
    node.barrier();
    const stopwatch clock;
    for (unsigned pass = 0; pass < radix::passes(bits); ++pass) {
      sort_pass(node, pass, bits, shared_keys, histograms, w);
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
    {  // the others' blocks are in isotach memory already; this node's may be private
      write_batch out(node);
      out.write(shared_keys, own.begin, std::span<const std::uint32_t>(w.mine));
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
