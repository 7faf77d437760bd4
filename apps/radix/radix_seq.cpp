// radix-seq: the sequential radix sort, the reference for radix's speedup and check. The
// same kernel (radix_kernel.cpp) as the parallel version, on plain arrays, no runtime.
//
//   radix-seq --keys 4194304 --check
#include <bit>
#include <optional>

#include "apps/common/command_line.hpp"
#include "apps/common/report.hpp"
#include "apps/radix/radix_kernel.hpp"

int main(int argc, char** argv) {
  using namespace iso::apps;
  long keys = 1 << 20;
  long radix = 256;
  long seed = 1;
  bool check = false;
  command_line cli("radix-seq", "sequential radix sort of 32-bit keys");
  cli.add_count("--keys", keys, 1, 1L << 28, "number of keys");
  cli.add_count("--radix", radix, 2, 65536, "buckets per pass", true);
  cli.add_count("--seed", seed, 0, 1'000'000'000, "seed of the input");
  cli.add_switch("--check", check, "check that the result is sorted and a permutation");
  if (std::optional<int> status = cli.parse(argc, argv)) return *status;

  const unsigned bits = static_cast<unsigned>(std::countr_zero(static_cast<unsigned long>(radix)));
  std::vector<std::uint32_t> data =
      radix::make_input(static_cast<std::uint64_t>(seed), 0, static_cast<std::size_t>(keys));
  const std::uint64_t digest = radix::multiset_digest(data);
  std::vector<std::uint32_t> scratch(data.size(), 0);  // touched before the clock starts
  const stopwatch clock;
  radix::sort(data, scratch, bits);
  const double seconds = clock.seconds();

  print_size("radix-seq",
             format("%ld keys, radix %ld (%u passes)", keys, radix, radix::passes(bits)), 1);
  print_time("radix-seq", seconds, "sort");
  if (!check) {
    print_check_skipped("radix-seq");
    return 0;
  }
  const check_result result = radix::check_sorted(data, digest);
  print_check("radix-seq", result);
  return result.passed ? 0 : 1;
}
