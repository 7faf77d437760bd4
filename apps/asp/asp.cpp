// asp: all-pairs shortest paths (Floyd-Warshall) on Orca-style shared objects (after the
// Orca ASP of Bal et al.).
//
// Rows are split in blocks over the nodes, private to their owner. In iteration k the owner
// of row k publishes it through a replicated object (a write storing row k on every
// replica, in the job-wide order); every other node waits for it with a guarded read
// `row(k)` of its own replica, then every node relaxes its own rows through k. With
// --check every node publishes its final rows through a second object of the same type
// and node 0 compares the whole matrix with the sequential run's.
//
//   isorun -n 2 -- asp --n 512 --check
#include <cstdint>
#include <cstdio>
#include <iso/iso.hpp>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "apps/asp/asp_kernel.hpp"
#include "apps/common/command_line.hpp"
#include "apps/common/partition.hpp"
#include "apps/common/report.hpp"

namespace {

constexpr iso::operation_id kPut = 0, kRow = 1;

// Rows published so far, by number (an empty row: not yet).
struct rows_state {
  std::vector<std::vector<std::int32_t>> rows;
};

using row_guard = bool (*)(const rows_state&, std::uint64_t);
using row_body = std::span<const std::int32_t> (*)(const rows_state&, std::uint64_t);

// put(k, row) stores row k of the `rows`; row(k) waits until it is there. A put is checked
// before it goes out (a row number beyond the last, an empty row), so its body cannot fail
// and no copy of the rows is taken before it (noexcept).
iso::object_type make_rows_type(std::size_t rows) {
  const auto check = [rows](std::uint64_t k, std::span<const std::int32_t> row) {
    if (k >= rows || row.empty()) {
      throw iso::error(iso::error_code::invalid_argument,
                       iso::apps::format("put: row %llu of %zu distances, where rows are 0 to "
                                         "%zu and never empty",
                                         static_cast<unsigned long long>(k), row.size(), rows - 1));
    }
  };
  return iso::typed_object<rows_state>("AspRows")
      .write(
          kPut, "put",
          [](rows_state& s, std::uint64_t k, std::span<const std::int32_t> row) noexcept {
            if (s.rows.size() <= k) s.rows.resize(k + 1);
            s.rows[k].assign(row.begin(), row.end());
          },
          check)
      .read(kRow, "row",
            std::vector<std::pair<row_guard, row_body>>{
                {[](const rows_state& s, std::uint64_t k) {
                   return k < s.rows.size() && !s.rows[k].empty();
                 },
                 [](const rows_state& s, std::uint64_t k) {
                   return std::span<const std::int32_t>(s.rows[k]);
                 }}})
      .type();
}

void put_row(iso::object& rows, std::size_t k, std::span<const std::int32_t> row) {
  rows.call<void>(kPut, std::uint64_t{k}, row);
}

// Row k from `rows` into `into` (as many distances as a row has), waiting until it is there.
void read_row(iso::object& rows, std::size_t k, std::span<std::int32_t> into) {
  rows.read_into(kRow, into, std::uint64_t{k});
}

std::string too_many_nodes(unsigned nodes, long n) {
  return iso::apps::format("%u nodes are more than the %ld rows (use --n %u or more)", nodes, n,
                           nodes);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace iso::apps;
  long n = 512;
  long seed = 1;
  bool check = false;
  bool phases = false;
  command_line cli("asp",
                   "all-pairs shortest paths (Floyd), row k published through a "
                   "replicated object");
  cli.add_count("--n", n, 1, 8192, "vertices");
  cli.add_count("--seed", seed, 1, 1'000'000'000, "seed of the graph");
  cli.add_switch("--check", check, "compare the distances with the sequential version's");
  cli.add_switch("--phases", phases, "print where each node's time goes");
  if (std::optional<int> status = cli.parse(argc, argv)) return *status;
  if (job_nodes() > static_cast<unsigned long>(n))
    return cli.refuse(too_many_nodes(job_nodes(), n));

  return iso::run(argc, argv, [&](iso::node& node) {
    const iso::object_type rows_type = make_rows_type(static_cast<std::size_t>(n));
    const auto size = static_cast<std::size_t>(n);
    const std::uint32_t nodes = node.count();
    const std::uint32_t me = node.id();
    if (nodes > size) throw iso::error(iso::error_code::invalid_argument, too_many_nodes(nodes, n));
    const block_range own = block_of(size, nodes, me);
    std::vector<std::int32_t> d =
        asp::make_rows(size, static_cast<std::uint64_t>(seed), own.begin, own.size());
    iso::object published(node, rows_type, {.placement = iso::object_placement::replicated});
    std::vector<std::int32_t> row_k(size);
    phase_timer timer;
    node.barrier();
    const stopwatch clock;
    for (std::size_t k = 0; k < size; ++k) {
      std::span<const std::int32_t> through;
      if (k >= own.begin && k < own.end) {
        through = std::span<const std::int32_t>(d).subspan((k - own.begin) * size, size);
        if (nodes > 1) {
          timer.enter("publish");
          put_row(published, k, through);
        }
      } else {
        timer.enter("wait for row");
        read_row(published, k, row_k);
        through = row_k;
      }
      timer.enter("relax");
      asp::relax(d, size, through, k);
    }
    const double seconds = clock.seconds();
    timer.stop();
    if (phases) std::printf("asp: node %u: %s\n", me, timer.summary().c_str());
    if (me == 0) {
      print_size("asp", format("%ld vertices, seed %ld", n, seed), nodes);
      print_time("asp", seconds, "iterations");
    }
    if (!check) {
      if (me == 0) print_check_skipped("asp");
      return;
    }
    iso::object results(node, rows_type, {.placement = iso::object_placement::replicated});
    if (me != 0) {
      for (std::size_t i = own.begin; i < own.end; ++i) {
        put_row(results, i, std::span<const std::int32_t>(d).subspan((i - own.begin) * size, size));
      }
      return;
    }
    std::vector<std::int32_t> got(size * size);
    std::copy(d.begin(), d.end(), got.begin());
    for (std::size_t i = own.end; i < size; ++i)
      read_row(results, i, std::span(got).subspan(i * size, size));
    std::vector<std::int32_t> want =
        asp::make_rows(size, static_cast<std::uint64_t>(seed), 0, size);
    asp::solve(want, size);
    check_result outcome{true, ""};
    for (std::size_t i = 0; outcome.passed && i < want.size(); ++i) {
      if (got[i] != want[i]) {
        outcome = {false, format("first difference from the sequential distances at %zu -> %zu: "
                                 "%d != %d",
                                 i / size, i % size, got[i], want[i])};
      }
    }
    if (outcome.passed) {
      const asp::summary s = asp::summarize(got);
      outcome.detail = format(
          "%zu connected pairs, digest %016llx; identical to the sequential "
          "distances",
          s.connected, static_cast<unsigned long long>(s.digest));
    }
    print_check("asp", outcome);
    if (!outcome.passed) throw iso::error(iso::error_code::data_loss, "asp: the check failed");
  });
}
