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

namespace {

std::size_t outcome_width(const test& t, const std::set<outcome>& rows) {
  std::size_t width = 7;
  for (const outcome& o : rows) width = std::max(width, format_outcome(t, o).size());
  return width;
}

std::uint64_t count_of(const test_result& r, const outcome& o) {
  const auto it = r.counts.find(o);
  return it == r.counts.end() ? 0 : it->second;
}

}  // namespace

bool isotach_failed(const test_result& r) {
  return r.forbidden > 0 || r.history_violations > 0 || r.unjudged > 0;
}

std::string format_comparison(const test& t, const test_result& isotach, const test_result& relaxed,
                              std::uint32_t nodes) {
  std::string out = "\n" + t.name + (t.description.empty() ? "" : " (" + t.description + ")") +
                    ": " + std::to_string(isotach.runs) + " runs in each mode, " +
                    std::to_string(t.processes.size()) + " processes on " + std::to_string(nodes) +
                    " nodes; isotach beside " + mode_name(true) + "\n";
  std::set<outcome> rows = isotach.allowed;
  for (const auto& [o, n] : isotach.counts) rows.insert(o);
  for (const auto& [o, n] : relaxed.counts) rows.insert(o);
  const std::size_t width = outcome_width(t, rows);
  out += "  " + pad("outcome", width) + "   under SC   isotach  RELAXED  verdict\n";
  for (const outcome& o : rows) {
    const std::uint64_t in_isotach = count_of(isotach, o);
    const std::uint64_t in_relaxed = count_of(relaxed, o);
    const bool allowed = isotach.allowed.contains(o);
    std::string verdict;
    if (allowed) {
      verdict = in_isotach + in_relaxed ? "ok" : "not seen";
    } else if (in_isotach > 0) {
      verdict = "VIOLATION under isotach";
    } else {
      verdict = in_relaxed ? "isotach ok; relaxed mode broke SC" : "isotach ok";
    }
    char line[80];
    std::snprintf(line, sizeof line, "  %-9s  %7llu  %7llu  ", allowed ? "allowed" : "FORBIDDEN",
                  static_cast<unsigned long long>(in_isotach),
                  static_cast<unsigned long long>(in_relaxed));
    out +=
        (satisfies(t, o) ? "* " : "  ") + pad(format_outcome(t, o), width) + line + verdict + "\n";
  }
  out += "  (* marks the outcome of " + condition_text(t) + ": " +
         (exists_allowed(t, isotach.allowed) ? "allowed" : "forbidden") + " under SC, observed " +
         std::to_string(isotach.exists_observed) + " times under isotach, " +
         std::to_string(relaxed.exists_observed) + " in relaxed mode)\n";
  out += "  histories with a cycle in po|rf|co|fr: isotach " +
         std::to_string(isotach.history_violations) + " (not judged " +
         std::to_string(isotach.unjudged) + "), relaxed mode " +
         std::to_string(relaxed.history_violations) + " (not judged " +
         std::to_string(relaxed.unjudged) + ")\n";
  if (!isotach.first_violation.empty()) {
    out += "  first violation under isotach: " + isotach.first_violation + "\n";
  }
  if (!relaxed.first_violation.empty()) {
    out += "  first violation in relaxed mode: " + relaxed.first_violation + "\n";
  }
  out +=
      std::string("  verdict: isotach ") +
      (isotach_failed(isotach) ? "FORBIDDEN OUTCOME OBSERVED" : "OK, no outcome that SC forbids") +
      "; relaxed mode (NOT SC): " +
      (relaxed.forbidden > 0 ? std::to_string(relaxed.forbidden) + " runs with outcomes SC forbids"
                             : "no outcome that SC forbids was seen") +
      "\n";
  return out;
}

std::string format_comparison_summary(const std::vector<comparison_row>& rows,
                                      std::uint32_t nodes) {
  std::string out =
      "\nsummary (" + std::to_string(nodes) + " nodes, isotach beside " + mode_name(true) + ")\n";
  out += "                       exists     --- forbidden outcomes ---  --- history cycles ---\n";
  out += "  test          runs  under SC       isotach       RELAXED    isotach    RELAXED\n";
  std::uint64_t bad = 0;
  std::uint64_t broken = 0;
  for (const comparison_row& r : rows) {
    char line[160];
    std::snprintf(line, sizeof line, "  %-12s %5llu  %-10s %12llu  %12llu  %9llu  %9llu\n",
                  r.isotach.name.c_str(), static_cast<unsigned long long>(r.isotach.runs),
                  r.isotach.exists_allowed ? "allowed" : "forbidden",
                  static_cast<unsigned long long>(r.isotach.forbidden),
                  static_cast<unsigned long long>(r.relaxed.forbidden),
                  static_cast<unsigned long long>(r.isotach.history_violations),
                  static_cast<unsigned long long>(r.relaxed.history_violations));
    out += line;
    bad += r.isotach.forbidden + r.isotach.history_violations;
    broken += r.relaxed.forbidden;
  }
  out += bad == 0 ? "isotach: all tests OK\n" : "isotach: FORBIDDEN OUTCOMES OBSERVED\n";
  out += broken == 0
             ? "relaxed mode: no outcome that SC forbids was seen\n"
             : "relaxed mode: outcomes that SC forbids were seen (as relaxed mode allows)\n";
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
