#include "tools/litmus/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <numeric>
#include <optional>
#include <random>

#include "iso/error.hpp"
#include "iso/isochron.hpp"

namespace iso::litmus {
namespace {

// The placement of one run, the same on every node (drawn from the shared seed).
struct run_plan {
  std::vector<iso::node_id> process_node;           // process -> node
  std::vector<std::vector<iso::node_id>> copysets;  // location -> nodes holding a copy
};

std::uint64_t name_hash(const std::string& s) {
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  return h;
}

std::vector<run_plan> make_plans(const test& t, const run_options& o, std::uint32_t nodes) {
  std::mt19937_64 rng(o.seed ^ name_hash(t.name));
  std::vector<run_plan> plans(o.iterations);
  std::vector<iso::node_id> all(nodes);
  std::iota(all.begin(), all.end(), 0);
  for (run_plan& plan : plans) {
    std::shuffle(all.begin(), all.end(), rng);
    plan.process_node.assign(all.begin(), all.begin() + static_cast<long>(t.processes.size()));
    for (std::size_t v = 0; v < t.locations.size(); ++v) {
      std::vector<iso::node_id> copies;
      switch (rng() % 3) {
        case 0:  // everywhere
          copies = all;
          break;
        case 1:  // one copy
          copies = {static_cast<iso::node_id>(rng() % nodes)};
          break;
        default:  // a random non-empty subset
          for (iso::node_id n = 0; n < nodes; ++n) {
            if (rng() % 2) copies.push_back(n);
          }
          if (copies.empty()) copies.push_back(static_cast<iso::node_id>(rng() % nodes));
          break;
      }
      std::sort(copies.begin(), copies.end());
      plan.copysets.push_back(std::move(copies));
    }
  }
  return plans;
}

void random_delay(iso::node& node, std::mt19937_64& rng, std::uint32_t max_us) {
  if (max_us == 0) return;
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::microseconds(rng() % (max_us + 1));
  while (std::chrono::steady_clock::now() < until) node.poll();
}

// Runs process `p`'s isochrons on this node; returns its registers.
std::vector<std::int64_t> run_process(iso::node& node, const test& t, std::size_t p,
                                      const std::vector<iso::shared_var<std::int64_t>>& vars,
                                      std::mt19937_64& rng, std::uint32_t max_delay_us) {
  const process& proc = t.processes[p];
  std::vector<iso::value<std::int64_t>> reads(proc.registers.size());
  for (const isochron_spec& spec : proc.isochrons) {
    random_delay(node, rng, max_delay_us);
    iso::isochron iso(node);
    for (const access& a : spec) {
      const auto loc = static_cast<std::size_t>(
          std::find(t.locations.begin(), t.locations.end(), a.location) - t.locations.begin());
      const auto var = vars[loc];
      if (a.write) {
        iso.write(var, a.value);
      } else {
        const auto r = static_cast<std::size_t>(
            std::find(proc.registers.begin(), proc.registers.end(), a.reg) -
            proc.registers.begin());
        reads[r] = iso.read(var);
      }
    }
    iso.end();
  }
  std::vector<std::int64_t> out;
  out.reserve(reads.size());
  for (const auto& v : reads) out.push_back(v.get());
  return out;
}

template <typename T>
void send_values(iso::node& node, iso::node_id to, const std::vector<T>& values) {
  node.send(to, std::as_bytes(std::span<const T>(values)));
}

template <typename T>
std::vector<T> receive_values(iso::message m) {
  std::vector<T> out(m.bytes().size() / sizeof(T));
  std::memcpy(out.data(), m.bytes().data(), out.size() * sizeof(T));
  return out;
}

// Every node's events since `mark`, gathered at node 0 (node by node, each node's events
// in the order they executed there, which is what the graph checker needs).
std::vector<iso::trace_event> gather_trace(iso::node& node, std::size_t mark) {
  const auto& trace = node.trace();
  const std::vector<iso::trace_event> mine(trace.begin() + static_cast<long>(mark), trace.end());
  const std::size_t per_message = node.max_message_size() / sizeof(iso::trace_event);
  if (node.id() != 0) {
    send_values(node, 0, std::vector<std::uint64_t>{mine.size()});
    for (std::size_t i = 0; i < mine.size(); i += per_message) {
      const std::size_t n = std::min(per_message, mine.size() - i);
      send_values(node, 0,
                  std::vector<iso::trace_event>(mine.begin() + static_cast<long>(i),
                                                mine.begin() + static_cast<long>(i + n)));
    }
    return {};
  }
  std::vector<iso::trace_event> all = mine;
  // Messages from one sender arrive in order; senders interleave, so keep them apart.
  std::map<iso::node_id, std::uint64_t> expected;
  std::map<iso::node_id, std::vector<iso::trace_event>> got;
  std::size_t done = 0;
  while (done + 1 < node.count()) {
    iso::message m = node.receive();
    const iso::node_id from = m.source();
    if (!expected.contains(from)) {
      expected[from] = receive_values<std::uint64_t>(std::move(m)).at(0);
    } else {
      auto part = receive_values<iso::trace_event>(std::move(m));
      got[from].insert(got[from].end(), part.begin(), part.end());
    }
    if (got[from].size() == expected[from]) ++done;
  }
  for (auto& [from, events] : got) all.insert(all.end(), events.begin(), events.end());
  return all;
}

}  // namespace

test_result run_test(iso::node& node, const test& t, const run_options& options) {
  if (t.processes.size() > node.count()) {
    throw iso::error(iso::error_code::invalid_argument,
                     t.name + " needs " + std::to_string(t.processes.size()) +
                         " processes, one per node; this job has " + std::to_string(node.count()) +
                         " nodes (isorun -n " + std::to_string(t.processes.size()) + " or more)");
  }
  test_result result;
  result.allowed = sc_outcomes(t);
  const std::vector<run_plan> plans = make_plans(t, options, node.count());
  const std::size_t nvars = t.locations.size();
  // Variable v of run i is page i * nvars + v (one variable per page), placed by its plan.
  const std::uint32_t page_size = node.options().page_variables;
  const auto vars =
      node.allocate<std::int64_t>(static_cast<std::size_t>(options.iterations) * nvars * page_size,
                                  iso::placement::per_page([&plans, nvars](std::uint64_t page) {
                                    return plans[page / nvars].copysets[page % nvars];
                                  }));
  std::mt19937_64 delays(options.seed * 7919 + node.id());
  const std::size_t mark = node.trace().size();
  const std::vector<std::string> observed = t.observed_locations();
  std::vector<outcome> outcomes(options.iterations);
  auto var_index = [&](std::uint32_t i, std::size_t v) { return (i * nvars + v) * page_size; };

  for (std::uint32_t i = 0; i < options.iterations; ++i) {
    const run_plan& plan = plans[i];
    if (node.id() == 0) {
      iso::isochron init(node);
      bool any = false;
      for (std::size_t v = 0; v < nvars; ++v) {
        const std::int64_t value = t.initial_value(t.locations[v]);
        if (value != 0) {
          init.write(vars[var_index(i, v)], value);
          any = true;
        }
      }
      init.end();
      (void)any;
    }
    node.barrier();
    for (std::size_t p = 0; p < t.processes.size(); ++p) {
      if (plan.process_node[p] != node.id()) continue;
      std::vector<iso::shared_var<std::int64_t>> run_vars;
      for (std::size_t v = 0; v < nvars; ++v) run_vars.push_back(vars[var_index(i, v)]);
      // The message: the process's number, then its registers.
      std::vector<std::int64_t> message{static_cast<std::int64_t>(p)};
      for (const std::int64_t r : run_process(node, t, p, run_vars, delays, options.max_delay_us)) {
        message.push_back(r);
      }
      send_values(node, 0, message);
    }
    if (node.id() == 0) {
      outcome& o = outcomes[i];
      o.registers.resize(t.processes.size());
      for (std::size_t k = 0; k < t.processes.size(); ++k) {
        auto regs = receive_values<std::int64_t>(node.receive());
        const auto p = static_cast<std::size_t>(regs.at(0));
        o.registers[p].assign(regs.begin() + 1, regs.end());
      }
    }
    // Every isochron of the run has executed everywhere after this barrier.
    node.barrier();
    if (node.id() == 0 && !observed.empty()) {
      std::vector<iso::value<std::int64_t>> finals;
      iso::isochron read(node);
      for (const std::string& loc : observed) {
        const auto v = static_cast<std::size_t>(
            std::find(t.locations.begin(), t.locations.end(), loc) - t.locations.begin());
        finals.push_back(read.read(vars[var_index(i, v)]));
      }
      read.end();
      for (const auto& f : finals) outcomes[i].finals.push_back(f.get());
    }
  }

  std::vector<iso::trace_event> events = gather_trace(node, mark);
  node.barrier();
  if (node.id() != 0) return result;

  // Sort the gathered events into runs by address (each run has its own variables).
  const iso::address first = vars[0].where();
  std::vector<std::vector<iso::trace_event>> by_run(options.iterations);
  for (const iso::trace_event& e : events) {
    if (e.op == iso::trace_op::message || e.address < first) continue;
    const std::uint64_t index = (e.address - first) / page_size / nvars;
    if (index < by_run.size()) by_run[index].push_back(e);
  }
  std::optional<std::uint32_t> keep;
  std::optional<std::uint32_t> keep_exists;
  auto names_of = [&](std::uint32_t i) {
    std::map<std::uint64_t, std::string> names;
    for (std::size_t v = 0; v < nvars; ++v) names[first + var_index(i, v)] = t.locations[v];
    return names;
  };
  auto judge = [&](std::uint32_t i, const std::map<std::uint64_t, std::string>& names) {
    return iso::sc::check_graph(
        by_run[i], {.name = [&names](std::uint64_t a) { return names.at(a); }, .initial = {}});
  };
  for (std::uint32_t i = 0; i < options.iterations; ++i) {
    const outcome& o = outcomes[i];
    ++result.counts[o];
    ++result.runs;
    if (!result.allowed.contains(o)) {
      ++result.forbidden;
      if (!keep) keep = i;
    }
    if (satisfies(t, o)) {
      ++result.exists_observed;
      if (!keep_exists) keep_exists = i;
    }
    const iso::sc::graph_report judgement = judge(i, names_of(i));
    ++result.histories_checked;
    if (!judgement.checkable) {
      ++result.unjudged;
    } else if (!judgement.consistent) {
      ++result.history_violations;
    }
    if (!judgement.consistent && result.first_violation.empty()) {
      result.first_violation = "run " + std::to_string(i) + ": " + judgement.explanation;
    }
  }
  if (options.iterations > 0) {
    const std::uint32_t chosen = keep.value_or(keep_exists.value_or(0));
    result.kept = {.iteration = chosen,
                   .result = outcomes[chosen],
                   .events = by_run[chosen],
                   .names = names_of(chosen),
                   .process_node = plans[chosen].process_node,
                   .judgement = judge(chosen, names_of(chosen))};
  }
  return result;
}

}  // namespace iso::litmus
