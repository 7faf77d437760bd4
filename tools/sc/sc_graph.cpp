#include "tools/sc/sc_graph.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

namespace iso::sc {
namespace {

constexpr std::size_t kInitial = 0;

struct read_access {
  std::size_t vertex = 0;
  std::uint64_t address = 0;
  std::uint64_t value = 0;
};

class builder {
 public:
  builder(const std::vector<iso::trace_event>& events, const graph_options& options)
      : events_(events), options_(options) {
    report_.vertices.push_back({.issuer = 0, .issue_rank = 0, .initial = true, .accesses = {}});
  }

  graph_report run() {
    collect_vertices();
    if (!report_.checkable) return std::move(report_);
    add_program_order();
    add_coherence_and_reads();
    if (!report_.consistent) return std::move(report_);
    find_cycle();
    return std::move(report_);
  }

 private:
  [[nodiscard]] std::string name(std::uint64_t address) const {
    if (options_.name) return options_.name(address);
    return "@" + std::to_string(address);
  }

  [[nodiscard]] std::uint64_t initial(std::uint64_t address) const {
    auto it = options_.initial.find(address);
    return it == options_.initial.end() ? 0 : it->second;
  }

  std::size_t vertex_of(const iso::trace_event& e) {
    auto [it, fresh] = vertex_.emplace(std::make_pair(e.issuer, e.issue_rank), 0);
    if (fresh) {
      it->second = report_.vertices.size();
      report_.vertices.push_back(
          {.issuer = e.issuer, .issue_rank = e.issue_rank, .initial = false, .accesses = {}});
    }
    return it->second;
  }

  void note_access(std::size_t v, char kind, std::uint64_t address, std::uint64_t value) {
    std::string& text = report_.vertices[v].accesses;
    if (!text.empty()) text += "; ";
    text += std::string(1, kind) + " " + name(address) + "=" + std::to_string(value);
  }

  void note_write(std::size_t v, std::uint64_t address, std::uint64_t value) {
    // Every copy executes the same write: one access per (isochron, address, value).
    if (!seen_writes_.emplace(v, address, value).second) return;
    ++report_.writes;
    note_access(v, 'W', address, value);
    auto [it, fresh] = writer_.emplace(std::make_pair(address, value), v);
    if (!fresh && it->second != v) {
      unjudgeable("two writes stored " + std::to_string(value) + " in " + name(address) + " (" +
                  describe_vertex(report_.vertices[it->second]) + " and " +
                  describe_vertex(report_.vertices[v]) + "); values must be unique per address");
    }
  }

  void note_read(std::size_t v, std::uint64_t address, std::uint64_t value) {
    ++report_.reads;
    note_access(v, 'R', address, value);
    reads_.push_back({v, address, value});
  }

  void collect_vertices() {
    for (const iso::trace_event& e : events_) {
      switch (e.op) {
        case iso::trace_op::read:
          note_read(vertex_of(e), e.address, e.value);
          break;
        case iso::trace_op::write:
        case iso::trace_op::assign:
          note_write(vertex_of(e), e.address, e.value);
          break;
        case iso::trace_op::fetch_add:
        case iso::trace_op::exchange:
        case iso::trace_op::compare_exchange: {
          const std::size_t v = vertex_of(e);
          if (!seen_rmw_.emplace(v, e.address, e.value).second) break;
          note_read(v, e.address, e.value);
          if (e.stored != e.value) note_write(v, e.address, e.stored);
          break;
        }
        case iso::trace_op::sched:
        case iso::trace_op::message:
          break;
      }
    }
  }

  void unjudgeable(const std::string& why) {
    if (report_.checkable) report_.explanation = "cannot judge the history: " + why;
    report_.checkable = false;
    report_.consistent = false;
  }

  void add_edge(std::size_t from, std::size_t to, relation kind) {
    if (from == to) return;  // inside one isochron: atomic, not an order
    if (!edge_set_.emplace(from, to, kind).second) return;
    report_.edges.push_back({from, to, kind});
  }

  void add_program_order() {
    std::map<std::uint32_t, std::map<std::uint64_t, std::size_t>> by_issuer;
    for (std::size_t v = 1; v < report_.vertices.size(); ++v) {
      by_issuer[report_.vertices[v].issuer][report_.vertices[v].issue_rank] = v;
    }
    for (const auto& [issuer, ranks] : by_issuer) {
      std::optional<std::size_t> last;
      for (const auto& [rank, v] : ranks) {
        if (last) add_edge(*last, v, relation::po);
        last = v;
      }
    }
  }

  // The write order of every copy (node, address), from the order of that node's events.
  [[nodiscard]] std::map<std::pair<std::uint32_t, std::uint64_t>, std::vector<std::size_t>>
  copy_orders() {
    constexpr std::size_t kHeld = static_cast<std::size_t>(-1);
    std::map<std::pair<std::uint32_t, std::uint64_t>, std::vector<std::size_t>> order;
    // A sched's place, kept for the assign of its issuer: (node, address, issuer) -> index.
    std::map<std::tuple<std::uint32_t, std::uint64_t, std::uint32_t>, std::size_t> held;
    std::set<std::tuple<std::uint32_t, std::size_t, std::uint64_t, std::uint64_t>> placed;
    for (const iso::trace_event& e : events_) {
      auto& seq = order[{e.node, e.address}];
      std::uint64_t stored = e.value;
      switch (e.op) {
        case iso::trace_op::sched:
          held[{e.node, e.address, e.pid}] = seq.size();
          seq.push_back(kHeld);
          continue;
        case iso::trace_op::fetch_add:
        case iso::trace_op::exchange:
        case iso::trace_op::compare_exchange:
          if (e.stored == e.value) continue;
          stored = e.stored;
          break;
        case iso::trace_op::write:
        case iso::trace_op::assign:
          break;
        case iso::trace_op::read:
        case iso::trace_op::message:
          continue;
      }
      const std::size_t v = vertex_of(e);
      if (!placed.emplace(e.node, v, e.address, stored).second) continue;
      if (e.op == iso::trace_op::assign) {
        auto it = held.find({e.node, e.address, e.pid});
        if (it != held.end()) {
          seq[it->second] = v;
          held.erase(it);
          continue;
        }
      }
      // An isochron's writes to one copy are contiguous (it is atomic): one place in co.
      if (seq.empty() || seq.back() != v) seq.push_back(v);
    }
    for (auto& [copy, seq] : order) std::erase(seq, kHeld);
    return order;
  }

  void add_coherence_and_reads() {
    const auto order = copy_orders();
    std::map<std::uint64_t, std::vector<const std::vector<std::size_t>*>> copies;
    for (const auto& [copy, seq] : order) {
      if (seq.empty()) continue;
      copies[copy.second].push_back(&seq);
      add_edge(kInitial, seq.front(), relation::co);
      for (std::size_t i = 1; i < seq.size(); ++i) add_edge(seq[i - 1], seq[i], relation::co);
    }
    for (const read_access& r : reads_) {
      auto w = writer_.find({r.address, r.value});
      const bool from_initial = r.value == initial(r.address);
      const std::string what = "a read of " + name(r.address) + " in " +
                               describe_vertex(report_.vertices[r.vertex]) + " returned " +
                               std::to_string(r.value);
      if (w == writer_.end() && !from_initial) {
        if (report_.consistent) {
          report_.explanation = what + ", a value no write stored there (out of thin air)";
        }
        report_.consistent = false;
        continue;
      }
      if (w != writer_.end() && from_initial && w->second != r.vertex) {
        unjudgeable(what + ", which is both the initial value and a written one");
        continue;
      }
      const std::size_t source = w != writer_.end() ? w->second : kInitial;
      add_edge(source, r.vertex, relation::rf);
      // fr: to the write that follows the source in each copy's order (the rest follow by co).
      for (const std::vector<std::size_t>* seq : copies[r.address]) {
        std::size_t next = 0;
        if (source != kInitial) {
          auto at = std::find(seq->begin(), seq->end(), source);
          if (at == seq->end()) continue;
          next = static_cast<std::size_t>(at - seq->begin()) + 1;
        }
        // A read's own isochron writing after it is not an order between isochrons.
        while (next < seq->size() && (*seq)[next] == r.vertex) ++next;
        if (next < seq->size()) add_edge(r.vertex, (*seq)[next], relation::fr);
      }
    }
  }

  void find_cycle() {
    const std::size_t n = report_.vertices.size();
    std::vector<std::vector<std::size_t>> out(n);  // edge indices
    for (std::size_t i = 0; i < report_.edges.size(); ++i) {
      out[report_.edges[i].from].push_back(i);
    }
    enum : std::uint8_t { kWhite, kGrey, kBlack };
    std::vector<std::uint8_t> colour(n, kWhite);
    std::vector<std::size_t> via(n, 0);  // the edge by which a grey vertex was entered
    for (std::size_t root = 0; root < n; ++root) {
      if (colour[root] != kWhite) continue;
      std::vector<std::pair<std::size_t, std::size_t>> stack{{root, 0}};
      colour[root] = kGrey;
      while (!stack.empty()) {
        auto& [v, next] = stack.back();
        if (next == out[v].size()) {
          colour[v] = kBlack;
          stack.pop_back();
          continue;
        }
        const std::size_t edge = out[v][next++];
        const std::size_t to = report_.edges[edge].to;
        if (colour[to] == kWhite) {
          colour[to] = kGrey;
          via[to] = edge;
          stack.emplace_back(to, 0);
        } else if (colour[to] == kGrey) {
          record_cycle(edge, via);
          return;
        }
      }
    }
  }

  void record_cycle(std::size_t closing, const std::vector<std::size_t>& via) {
    const std::size_t start = report_.edges[closing].to;
    std::vector<graph_edge> cycle{report_.edges[closing]};
    for (std::size_t v = report_.edges[closing].from; v != start; v = report_.edges[via[v]].from) {
      cycle.push_back(report_.edges[via[v]]);
    }
    std::reverse(cycle.begin(), cycle.end());
    report_.consistent = false;
    std::string text = "cycle in po | rf | co | fr: " + describe_vertex(report_.vertices[start]);
    for (const graph_edge& e : cycle) {
      text += std::string(" -") + relation_name(e.kind) + "-> " +
              describe_vertex(report_.vertices[e.to]);
    }
    report_.explanation = text;
    report_.cycle = std::move(cycle);
  }

  const std::vector<iso::trace_event>& events_;
  const graph_options& options_;
  graph_report report_;
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::size_t> vertex_;
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::size_t> writer_;  // (addr, value)
  std::set<std::tuple<std::size_t, std::uint64_t, std::uint64_t>> seen_writes_;
  std::set<std::tuple<std::size_t, std::uint64_t, std::uint64_t>> seen_rmw_;
  std::vector<read_access> reads_;
  std::set<std::tuple<std::size_t, std::size_t, relation>> edge_set_;
};

}  // namespace

const char* relation_name(relation r) {
  switch (r) {
    case relation::po:
      return "po";
    case relation::rf:
      return "rf";
    case relation::co:
      return "co";
    case relation::fr:
      return "fr";
  }
  return "?";
}

std::string describe_vertex(const graph_vertex& v) {
  if (v.initial) return "[initial values]";
  return "N" + std::to_string(v.issuer) + "#" + std::to_string(v.issue_rank) + " [" + v.accesses +
         "]";
}

graph_report check_graph(const std::vector<iso::trace_event>& events,
                         const graph_options& options) {
  return builder(events, options).run();
}

}  // namespace iso::sc
