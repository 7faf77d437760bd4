#include "tools/litmus/report.hpp"

#include <algorithm>
#include <cstdio>

namespace iso::litmus {
namespace {

std::string condition_text(const test& t) {
  std::string out;
  for (const term& c : t.exists) {
    if (!out.empty()) out += " /\\ ";
    out += (c.process ? std::to_string(*c.process) + ":" : "") + c.name + "=" +
           std::to_string(c.value);
  }
  return "exists (" + out + ")";
}

bool exists_allowed(const test& t, const std::set<outcome>& allowed) {
  return std::any_of(allowed.begin(), allowed.end(),
                     [&](const outcome& o) { return satisfies(t, o); });
}

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string mode_name(bool relaxed) {
  return relaxed ? "RELAXED MODE (options::relaxed), NOT sequentially consistent" : "isotach";
}

}  // namespace

std::string show_test(const test& t) {
  std::string out = t.name + (t.description.empty() ? "" : ": " + t.description) + "\n";
  for (std::size_t p = 0; p < t.processes.size(); ++p) {
    out += "  P" + std::to_string(p) + ":";
    for (const isochron_spec& iso : t.processes[p].isochrons) {
      out += " [";
      for (std::size_t k = 0; k < iso.size(); ++k) {
        const access& a = iso[k];
        out += (k ? ", " : "") +
               (a.write ? a.location + "=" + std::to_string(a.value) : a.reg + "=" + a.location);
      }
      out += "]";
    }
    out += "\n";
  }
  const std::set<outcome> allowed = sc_outcomes(t);
  out += "  " + condition_text(t) + ": " + (exists_allowed(t, allowed) ? "allowed" : "forbidden") +
         " under SC\n";
  out += "  outcomes allowed under SC (" + std::to_string(allowed.size()) + "):\n";
  for (const outcome& o : allowed) out += "    " + format_outcome(t, o) + "\n";
  return out;
}

std::string format_table(const test& t, const test_result& r, std::uint32_t nodes, bool relaxed) {
  std::string out = "\n" + t.name + (t.description.empty() ? "" : " (" + t.description + ")") +
                    ": " + std::to_string(r.runs) + " runs, " + std::to_string(t.processes.size()) +
                    " processes on " + std::to_string(nodes) + " nodes, " + mode_name(relaxed) +
                    "\n";
  std::size_t width = 7;
  std::set<outcome> rows = r.allowed;
  for (const auto& [o, n] : r.counts) rows.insert(o);
  for (const outcome& o : rows) width = std::max(width, format_outcome(t, o).size());
  out += "  " + pad("outcome", width) + "   count  under SC   verdict\n";
  for (const outcome& o : rows) {
    const auto it = r.counts.find(o);
    const std::uint64_t n = it == r.counts.end() ? 0 : it->second;
    const bool allowed = r.allowed.contains(o);
    char line[64];
    std::snprintf(line, sizeof line, " %7llu  %-9s  ", static_cast<unsigned long long>(n),
                  allowed ? "allowed" : "FORBIDDEN");
    out += (satisfies(t, o) ? "* " : "  ") + pad(format_outcome(t, o), width) + line +
           (allowed ? (n ? "ok" : "not seen") : "VIOLATION") + "\n";
  }
  const bool ex_allowed = exists_allowed(t, r.allowed);
  out += "  (* marks the outcome of " + condition_text(t) + ": " +
         (ex_allowed ? "allowed" : "forbidden") + " under SC, observed " +
         std::to_string(r.exists_observed) + " times)\n";
  out += "  histories checked (acyclic po|rf|co|fr): " + std::to_string(r.histories_checked) +
         ", violations: " + std::to_string(r.history_violations) +
         ", not judged: " + std::to_string(r.unjudged) + "\n";
  if (!r.first_violation.empty()) out += "  first violation: " + r.first_violation + "\n";
  const bool ok = r.forbidden == 0 && r.history_violations == 0 && r.unjudged == 0;
  if (relaxed) {
    out += std::string("  verdict (relaxed mode): ") +
           (ok ? "no outcome that SC forbids was seen" : "outcomes that SC forbids were seen") +
           "\n";
  } else {
    out += std::string("  verdict: ") +
           (ok ? "OK, no outcome that SC forbids" : "FORBIDDEN OUTCOME OBSERVED") + "\n";
  }
  return out;
}

summary_row summarize(const test& t, const test_result& r) {
  return {.name = t.name,
          .runs = r.runs,
          .forbidden = r.forbidden,
          .history_violations = r.history_violations,
          .exists_allowed = exists_allowed(t, r.allowed),
          .exists_observed = r.exists_observed};
}

std::string format_summary(const std::vector<summary_row>& rows, std::uint32_t nodes,
                           bool relaxed) {
  std::string out = "\nsummary (" + std::to_string(nodes) + " nodes, " + mode_name(relaxed) + ")\n";
  out += "  test          runs  exists      observed  forbidden outcomes  history violations\n";
  std::uint64_t bad = 0;
  for (const summary_row& s : rows) {
    char line[160];
    std::snprintf(line, sizeof line, "  %-12s %5llu  %-10s %9llu  %18llu  %18llu\n", s.name.c_str(),
                  static_cast<unsigned long long>(s.runs),
                  s.exists_allowed ? "allowed" : "forbidden",
                  static_cast<unsigned long long>(s.exists_observed),
                  static_cast<unsigned long long>(s.forbidden),
                  static_cast<unsigned long long>(s.history_violations));
    out += line;
    bad += s.forbidden + s.history_violations;
  }
  if (relaxed) {
    out += bad == 0 ? "relaxed mode: no outcome that SC forbids was seen\n"
                    : "relaxed mode: outcomes that SC forbids were seen (as relaxed mode allows)\n";
  } else {
    out += bad == 0 ? "all tests: OK\n" : "some tests: FORBIDDEN OUTCOMES OBSERVED\n";
  }
  return out;
}

}  // namespace iso::litmus
