// Checks a recorded history against sequential consistency without trusting the runtime's
// ordering code: the axiom "acyclic(po | rf | co | fr)" of the herd models, lifted to
// isochrons (an isochron executes atomically, so its accesses form one vertex).
//
//   po  program order: each issuer's isochrons in issue order (issuer, issue_rank);
//   rf  reads-from: from the write of the value a read returned to that read (values must
//       be unique per address; the initial value comes from a virtual first write);
//   co  coherence: for each copy of a variable, the writes in the order that copy executed
//       them (the order of the events of one node in its trace); copies that disagree
//       form a co cycle by themselves;
//   fr  from-reads: from a read to the write that follows, in some copy's co, the write
//       it read from.
//
// The input is the concatenation of every node's node::trace(): the events of one node
// must keep the order in which they executed there. A sched holds its variable's place in
// co for the assign of the same issuer that follows it; a read-modify-write is a read of
// `value` and, when `stored` differs, a write of `stored`; messages are ignored.
//
//   iso::sc::graph_report r = iso::sc::check_graph(events, {.name = names});
//   if (!r.consistent) std::puts(r.explanation.c_str());
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "iso/trace.hpp"

namespace iso::sc {

enum class relation { po, rf, co, fr };
const char* relation_name(relation r);

struct graph_options {
  // How an address is printed (e.g. "x"); empty: "@<address>".
  std::function<std::string(std::uint64_t address)> name;
  // Initial values per address; an address not listed starts at 0.
  std::map<std::uint64_t, std::uint64_t> initial;
};

// One vertex of the graph: an isochron, or (id 0) the virtual initial write.
struct graph_vertex {
  std::uint32_t issuer = 0;
  std::uint64_t issue_rank = 0;
  bool initial = false;
  std::string accesses;  // e.g. "W x=1; R y=0"
};

struct graph_edge {
  std::size_t from = 0;
  std::size_t to = 0;
  relation kind = relation::po;
};

struct graph_report {
  // False when the history broke sequential consistency: a cycle, a read of a value no
  // write stored, or a read that cannot be attributed (`checkable` false).
  bool consistent = true;
  // False when the history cannot be judged: two writes of one value to one address, or a
  // read whose value both the initial value and a write could explain.
  bool checkable = true;
  std::string explanation;  // empty when consistent; otherwise the cycle or the fault
  std::vector<graph_vertex> vertices;
  std::vector<graph_edge> edges;  // every edge, duplicates removed
  std::vector<graph_edge> cycle;  // a cycle, in order (empty if none)
  std::size_t reads = 0;
  std::size_t writes = 0;
};

graph_report check_graph(const std::vector<iso::trace_event>& events,
                         const graph_options& options = {});

// "N1#0 [W y=1]" for a vertex: isochron 0 issued by node 1.
std::string describe_vertex(const graph_vertex& v);

}  // namespace iso::sc
