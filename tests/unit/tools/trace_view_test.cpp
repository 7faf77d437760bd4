// The pictures of a history (tools/trace_view/): a store-buffering history that broke SC
// drawn as the HTML page (lifelines, isochron boxes, the cycle marked, the verdict) and as
// Chrome trace JSON (tracks per node, flows from issuer to executor).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tools/sc/sc_graph.hpp"
#include "tools/trace_view/chrome_trace.hpp"
#include "tools/trace_view/logical_time_page.hpp"

namespace {

constexpr std::uint64_t kX = 100;
constexpr std::uint64_t kY = 200;

iso::trace_event ev(std::uint64_t pulse, std::uint32_t node, std::uint32_t issuer,
                    std::uint64_t rank, iso::trace_op op, std::uint64_t address,
                    std::uint64_t value) {
  return {.pulse = pulse,
          .pid = issuer,
          .rank = rank,
          .op = op,
          .address = address,
          .value = value,
          .node = node,
          .issuer = issuer,
          .issue_rank = rank};
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

// SB where both reads returned 0: writes applied where they arrived, reads served locally.
iso::trace_view::history_view broken_store_buffering() {
  iso::trace_view::history_view h;
  h.title = "SB <relaxed>";
  h.outcome = "0:r0=0 1:r0=0";
  h.verdict = "outcome 0:r0=0 1:r0=0: FORBIDDEN under SC";
  h.nodes = 2;
  h.events = {
      ev(1, 0, 0, 0, iso::trace_op::write, kX, 1), ev(1, 0, 0, 1, iso::trace_op::read, kY, 0),
      ev(2, 0, 1, 0, iso::trace_op::write, kY, 1), ev(1, 1, 1, 0, iso::trace_op::write, kY, 1),
      ev(1, 1, 1, 1, iso::trace_op::read, kX, 0),  ev(2, 1, 0, 0, iso::trace_op::write, kX, 1)};
  h.names = {{kX, "x"}, {kY, "y"}};
  h.node_notes = {{0, "P0"}, {1, "P1"}};
  h.judgement = iso::sc::check_graph(
      h.events, {.name = [&h](std::uint64_t a) { return h.names.at(a); }, .initial = {}});
  return h;
}

TEST(TraceView, PageDrawsLifelinesIsochronsTheCycleAndTheVerdict) {
  const auto h = broken_store_buffering();
  ASSERT_FALSE(h.judgement.consistent);
  const std::string page = iso::trace_view::logical_time_page(h);
  EXPECT_EQ(count(page, "class=\"lifeline\""), 2u);
  EXPECT_EQ(count(page, "<g class=\"isochron\""), 4u);
  EXPECT_EQ(count(page, "data-cycle=\"1\""), 4u);
  EXPECT_EQ(count(page, "class=\"cycle-edge\""), 4u);
  EXPECT_NE(page.find("<p id=\"verdict\">outcome 0:r0=0 1:r0=0: FORBIDDEN under SC</p>"),
            std::string::npos);
  EXPECT_NE(page.find("R y=0"), std::string::npos);
  EXPECT_NE(page.find("node 1 (P1)"), std::string::npos);
  EXPECT_NE(page.find("<title>SB &lt;relaxed&gt;</title>"), std::string::npos);
  EXPECT_NE(page.find("id=\"cycle\">cycle in po | rf | co | fr"), std::string::npos);
  EXPECT_EQ(page.find("id=\"note\""), std::string::npos);  // none asked for
  // Self-contained: no scripts, nothing fetched.
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("http://www.w3.org/2000/svg\" width"), page.find("http"));
}

TEST(TraceView, ChromeTraceHasTracksPerNodeAndFlowsFromIssuerToExecutor) {
  const std::string json = iso::trace_view::chrome_trace_json(broken_store_buffering());
  EXPECT_EQ(count(json, "\"process_name\""), 2u);
  EXPECT_EQ(count(json, "\"thread_name\""), 4u);
  EXPECT_EQ(count(json, "\"cat\": \"isochron\""), 4u);
  EXPECT_EQ(count(json, "\"cat\": \"operation\""), 6u);
  // The two writes executed on the other node's copy: one flow (start and finish) each.
  EXPECT_EQ(count(json, "\"ph\": \"s\""), 2u);
  EXPECT_EQ(count(json, "\"ph\": \"f\", \"bp\": \"e\""), 2u);
  EXPECT_NE(json.find("\"title\": \"SB <relaxed>: outcome"), std::string::npos);
}

TEST(TraceView, PageShowsTheNoteOnHowToReadIt) {
  auto h = broken_store_buffering();
  h.note = "writes drawn where they were first applied <early>";
  const std::string page = iso::trace_view::logical_time_page(h);
  EXPECT_NE(
      page.find("<p id=\"note\">writes drawn where they were first applied &lt;early&gt;</p>"),
      std::string::npos);
}

}  // namespace
