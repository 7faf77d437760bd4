// The one benchmark driver and statistics (tools/bench_support) that comm-bench and the
// isotach benchmarks share: how result lines become samples, and samples a printed figure.
#include <gtest/gtest.h>

#include "tools/bench_support/bench_driver.hpp"
#include "tools/bench_support/bench_stats.hpp"

namespace {

using iso::bench::cell;
using iso::bench::collect;
using iso::bench::collect_indexed;
using iso::bench::indexed_key;
using iso::bench::sample_table;
using iso::bench::summarize;

TEST(BenchStats, MedianOfOddAndEvenCountsWithSpread) {
  const auto odd = summarize({3.0, 1.0, 2.0});
  ASSERT_TRUE(odd.has_value());
  EXPECT_DOUBLE_EQ(odd->median, 2.0);
  EXPECT_DOUBLE_EQ(odd->min, 1.0);
  EXPECT_DOUBLE_EQ(odd->max, 3.0);
  const auto even = summarize({4.0, 1.0, 3.0, 2.0});
  ASSERT_TRUE(even.has_value());
  EXPECT_DOUBLE_EQ(even->median, 2.5);
  EXPECT_FALSE(summarize({}).has_value());
}

TEST(BenchStats, CellPrintsMedianAndSpreadInTheGivenFormat) {
  EXPECT_EQ(cell(summarize({0.5, 0.25, 0.75})), "0.500 [0.250-0.750]");
  EXPECT_EQ(cell(summarize({1500.4, 1499.6}), "%.0f"), "1500 [1500-1500]");
  EXPECT_EQ(cell(std::nullopt), "-");
  EXPECT_EQ(cell(summarize({1.0}), "%d"), "-");  // not a conversion of a double
}

TEST(BenchDriver, CollectsIndexedAndPlainResultLines) {
  sample_table samples;
  ASSERT_TRUE(
      collect_indexed("printf 'lat 8 0.5\\nnoise\\nlat 8 0.7\\nbw 64 120.5\\nidle_us 3.25\\n'",
                      {"lat", "bw"}, samples));
  EXPECT_EQ(samples[indexed_key("lat", 8)], (std::vector<double>{0.5, 0.7}));
  EXPECT_EQ(samples[indexed_key("bw", 64)], (std::vector<double>{120.5}));
  EXPECT_EQ(samples["idle_us"], (std::vector<double>{3.25}));
  EXPECT_EQ(samples.count("noise"), 0u);
}

TEST(BenchDriver, AFailedCommandFailsUnlessTolerated) {
  sample_table samples;
  EXPECT_FALSE(collect("echo x_us 1; exit 3", samples));
  EXPECT_TRUE(collect("echo x_us 2; exit 3", samples, /*tolerate_exit=*/true));
  EXPECT_EQ(samples["x_us"], (std::vector<double>{1.0, 2.0}));
}

}  // namespace
