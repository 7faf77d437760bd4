// The in-process fabric: what run.cpp takes from it to build a node.
#include "runtime/fabric/inproc_fabric.hpp"

#include <gtest/gtest.h>

#include <array>

#include "tests/support/test_support.hpp"

namespace iso::runtime {
namespace {

TEST(InprocFabric, EachNodeGetsItsOwnPortOnce) {
  auto fabric = inproc_fabric::create(3, "secret", {.ring_capacity = 4096});
  ASSERT_TRUE(fabric.ok()) << fabric.status();
  EXPECT_EQ((*fabric)->nodes(), 3u);
  auto p0 = (*fabric)->open_transport(0);
  auto p2 = (*fabric)->open_transport(2);
  ASSERT_TRUE(p0.ok() && p2.ok());
  EXPECT_EQ((*p0)->self(), 0u);
  EXPECT_EQ((*p2)->self(), 2u);
  EXPECT_EQ((*p2)->size(), 3u);
  auto again = (*fabric)->open_transport(0);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(again.status().message().find("node 0"), std::string_view::npos);
  EXPECT_EQ((*fabric)->open_transport(3).status().code(), absl::StatusCode::kFailedPrecondition);

  // The ports are the in-process transport: a packet from 0 reaches 2, in the ring size asked.
  const std::array<std::byte, 3> bytes{std::byte{1}, std::byte{2}, std::byte{3}};
  ASSERT_TRUE((*p0)->send(2, bytes).ok());
  std::size_t handled = 0;
  std::size_t got = 0;
  ASSERT_TRUE((*p2)->poll([&](comm::received_packet& p) { got = p.bytes().size(); }, handled).ok());
  EXPECT_EQ(handled, 1u);
  EXPECT_EQ(got, 3u);
  EXPECT_LT((*p0)->max_packet_size(), 4096u);
}

TEST(InprocFabric, WindowsAndFailuresComeFromItsSegment) {
  auto fabric = inproc_fabric::create(2, "secret", {.window_bytes = 8192});
  ASSERT_TRUE(fabric.ok()) << fabric.status();
  const std::vector<std::span<std::byte>> windows = (*fabric)->windows();
  ASSERT_EQ(windows.size(), 2u);
  EXPECT_GE(windows[0].size(), 8192u);
  EXPECT_NE(windows[0].data(), windows[1].data());
  std::unique_ptr<bootstrap> boot = (*fabric)->open_bootstrap(1, absl::Seconds(10));
  EXPECT_EQ(boot->rank(), 1u);
  EXPECT_EQ(boot->size(), 2u);
  EXPECT_TRUE((*fabric)->job_status().ok());
  iso::test::allow_log_lines_in_this_test();
  (*fabric)->mark_failed(1);
  EXPECT_EQ((*fabric)->job_status().code(), absl::StatusCode::kAborted);
  EXPECT_NE((*fabric)->job_status().message().find("node 1"), std::string_view::npos)
      << (*fabric)->job_status();
  EXPECT_EQ(boot->job_status().code(), absl::StatusCode::kAborted);
}

TEST(InprocFabric, BadSettingsAreRefused) {
  EXPECT_EQ(inproc_fabric::create(0, "s", {}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(inproc_fabric::create(2, "s", {.ring_capacity = 1000}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace iso::runtime
