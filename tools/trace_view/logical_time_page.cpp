#include "tools/trace_view/logical_time_page.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "tools/trace_view/isochron_order.hpp"

namespace iso::trace_view {
namespace {

constexpr int kLeft = 120;    // room for the pulse labels
constexpr int kColumn = 190;  // width of one node's column
constexpr int kTop = 70;      // below the node names
constexpr int kLine = 16;     // one operation's line of text
constexpr int kPad = 10;      // inside a box, and between boxes
constexpr int kHalfBox = 80;  // a box's reach either side of a lifeline

const char* const kColours[] = {"#dbeafe", "#dcfce7", "#fef3c7", "#fce7f3",
                                "#e0e7ff", "#ccfbf1", "#fee2e2", "#f3e8ff"};

std::string escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

int lifeline_x(std::uint32_t node) {
  return kLeft + kColumn / 2 + static_cast<int>(node) * kColumn;
}

struct placed {
  int top = 0;
  int height = 0;
  int left = 0;
  int right = 0;
};

}  // namespace

std::string logical_time_page(const history_view& h) {
  const std::vector<drawn_isochron> isochrons = isochrons_in_order(h);
  // Vertices of the checker's cycle, by (issuer, rank), and its edges.
  std::set<std::pair<std::uint32_t, std::uint64_t>> in_cycle;
  for (const auto& e : h.judgement.cycle) {
    for (const std::size_t v : {e.from, e.to}) {
      const auto& vertex = h.judgement.vertices[v];
      if (!vertex.initial) in_cycle.insert({vertex.issuer, vertex.issue_rank});
    }
  }

  std::string body;
  std::map<std::pair<std::uint32_t, std::uint64_t>, placed> where;
  int y = kTop;
  std::optional<std::pair<std::uint64_t, bool>> pulse;
  for (const drawn_isochron& iso : isochrons) {
    if (pulse != std::make_pair(iso.pulse, iso.after_pulse)) {
      pulse = std::make_pair(iso.pulse, iso.after_pulse);
      y += kPad;
      body += "<line class=\"pulse\" x1=\"8\" x2=\"" +
              std::to_string(kLeft + static_cast<int>(h.nodes) * kColumn) + "\" y1=\"" +
              std::to_string(y) + "\" y2=\"" + std::to_string(y) +
              "\" stroke=\"#9ca3af\" stroke-dasharray=\"4 4\"/>\n";
      body += "<text class=\"pulse-label\" x=\"8\" y=\"" + std::to_string(y + 14) +
              "\" font-size=\"12\" fill=\"#4b5563\">pulse " + std::to_string(iso.pulse) +
              (iso.after_pulse ? "+" : "") + "</text>\n";
      y += kPad;
    }
    std::size_t lines = 1;
    std::uint32_t lo = iso.issuer;
    std::uint32_t hi = iso.issuer;
    for (const auto& [node, events] : iso.at_node) {
      lines = std::max(lines, events.size());
      lo = std::min(lo, node);
      hi = std::max(hi, node);
    }
    const placed box{y, static_cast<int>(lines) * kLine + 2 * kPad + kLine,
                     lifeline_x(lo) - kHalfBox, lifeline_x(hi) + kHalfBox};
    const std::string label =
        "N" + std::to_string(iso.issuer) + "#" + std::to_string(iso.issue_rank);
    const bool marked = in_cycle.contains({iso.issuer, iso.issue_rank});
    body += "<g class=\"isochron\" data-issuer=\"" + std::to_string(iso.issuer) +
            "\" data-rank=\"" + std::to_string(iso.issue_rank) + "\"" +
            (marked ? " data-cycle=\"1\"" : "") + ">\n";
    body += "<rect x=\"" + std::to_string(box.left) + "\" y=\"" + std::to_string(box.top) +
            "\" width=\"" + std::to_string(box.right - box.left) + "\" height=\"" +
            std::to_string(box.height) + "\" rx=\"6\" fill=\"" +
            kColours[iso.issuer % (sizeof kColours / sizeof kColours[0])] + "\" stroke=\"" +
            (marked ? "#dc2626\" stroke-width=\"3" : "#6b7280\" stroke-width=\"1") +
            "\" fill-opacity=\"0.85\"/>\n";
    body += "<text x=\"" + std::to_string(box.left + 6) + "\" y=\"" + std::to_string(box.top + 14) +
            "\" font-size=\"11\" fill=\"#374151\">isochron " + label + " (issued by node " +
            std::to_string(iso.issuer) + ")</text>\n";
    body += "<circle cx=\"" + std::to_string(lifeline_x(iso.issuer)) + "\" cy=\"" +
            std::to_string(box.top) + "\" r=\"4\" fill=\"#111827\"/>\n";
    for (const auto& [node, events] : iso.at_node) {
      int line_y = box.top + kLine + kPad + 10;
      for (const iso::trace_event* e : events) {
        body += "<text class=\"op\" x=\"" + std::to_string(lifeline_x(node)) + "\" y=\"" +
                std::to_string(line_y) +
                "\" font-size=\"13\" font-family=\"monospace\" text-anchor=\"middle\">" +
                escape(operation_text(h, *e)) + (e->direct ? " (same-host)" : "") + "</text>\n";
        line_y += kLine;
      }
    }
    body += "</g>\n";
    where[{iso.issuer, iso.issue_rank}] = box;
    y += box.height + kPad;
  }

  // The cycle's edges, as red arrows from box to box.
  std::string arrows;
  for (const auto& e : h.judgement.cycle) {
    const auto& from = h.judgement.vertices[e.from];
    const auto& to = h.judgement.vertices[e.to];
    if (from.initial || to.initial) continue;
    const placed& a = where[{from.issuer, from.issue_rank}];
    const placed& b = where[{to.issuer, to.issue_rank}];
    const int x1 = a.right - 20;
    const int y1 = a.top + a.height / 2;
    const int x2 = b.right - 20;
    const int y2 = b.top + b.height / 2;
    const int bend = std::max(a.right, b.right) + 40 + static_cast<int>(e.kind) * 12;
    arrows +=
        "<path class=\"cycle-edge\" d=\"M " + std::to_string(x1) + " " + std::to_string(y1) +
        " C " + std::to_string(bend) + " " + std::to_string(y1) + ", " + std::to_string(bend) +
        " " + std::to_string(y2) + ", " + std::to_string(x2) + " " + std::to_string(y2) +
        "\" fill=\"none\" stroke=\"#dc2626\" stroke-width=\"2\" marker-end=\"url(#arrow)\"/>\n";
    arrows += "<text x=\"" + std::to_string(bend + 4) + "\" y=\"" + std::to_string((y1 + y2) / 2) +
              "\" font-size=\"12\" fill=\"#dc2626\">" + iso::sc::relation_name(e.kind) +
              "</text>\n";
  }

  const int width = kLeft + static_cast<int>(h.nodes) * kColumn + 120;
  const int height = y + 20;
  std::string lifelines;
  for (std::uint32_t n = 0; n < h.nodes; ++n) {
    const std::string x = std::to_string(lifeline_x(n));
    lifelines += "<text class=\"node-label\" x=\"" + x +
                 "\" y=\"30\" font-size=\"15\" font-weight=\"bold\" text-anchor=\"middle\">node " +
                 std::to_string(n) +
                 (h.node_notes.contains(n) ? " (" + escape(h.node_notes.at(n)) + ")" : "") +
                 "</text>\n";
    for (const std::string& piece :
         {std::string("<line class=\"lifeline\" data-node=\""), std::to_string(n),
          std::string("\" x1=\""), x, std::string("\" x2=\""), x, std::string("\" y1=\"40\" y2=\""),
          std::to_string(height - 10),
          std::string("\" stroke=\"#111827\" stroke-width=\"2\"/>\n")}) {
      lifelines += piece;
    }
  }

  std::string page =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
      escape(h.title) +
      "</title>\n<style>body{font-family:sans-serif;margin:16px;color:#111827}"
      "#verdict{font-size:18px;font-weight:bold}#cycle{color:#dc2626;font-family:monospace}"
      "</style>\n</head>\n<body>\n<h1>" +
      escape(h.title) + "</h1>\n";
  if (!h.outcome.empty()) page += "<p id=\"outcome\">outcome: " + escape(h.outcome) + "</p>\n";
  page += "<p id=\"verdict\">" + escape(h.verdict) + "</p>\n";
  page +=
      "<p>Logical time runs downwards: one lifeline per node, pulses as dashed lines, each "
      "isochron a box across the nodes where it executed (the dot marks its issuer), each "
      "operation where it executed; a read shows the value it returned.</p>\n";
  if (!h.note.empty()) page += "<p id=\"note\">" + escape(h.note) + "</p>\n";
  page += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) +
          "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(width) +
          " " + std::to_string(height) +
          "\">\n<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" "
          "markerWidth=\"8\" markerHeight=\"8\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L "
          "10 5 L 0 10 z\" fill=\"#dc2626\"/></marker></defs>\n" +
          lifelines + body + arrows + "</svg>\n";
  if (!h.judgement.consistent) {
    page += "<p id=\"cycle\">" + escape(h.judgement.explanation) + "</p>\n";
  } else {
    page += "<p id=\"checker\">history checker: acyclic po | rf | co | fr over " +
            std::to_string(h.judgement.vertices.size() - 1) + " isochrons</p>\n";
  }
  page += "</body>\n</html>\n";
  return page;
}

}  // namespace iso::trace_view
