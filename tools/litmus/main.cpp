// iso-litmus: runs litmus tests on a job's nodes and shows which outcomes sequential
// consistency forbids, and that isotach never produces them.
//
//   isorun -n 4 -- iso-litmus SB MP IRIW          # catalogue tests, 100 runs each
//   isorun -n 2 --transport inproc -- iso-litmus --iterations 500 my-test.litmus
//   iso-litmus --list                              # the catalogue (no job needed)
//   iso-litmus --show SB                           # the test and its SC outcomes
//
//   isorun -n 4 -- iso-litmus --compare SB MP      # isotach and relaxed mode side by side
//
// Exit status: 0 when every run's outcome is allowed under SC and every recorded history
// passes the graph checker; 1 otherwise (a bug of the runtime); 2 for bad arguments or
// litmus files. With --relaxed (options::relaxed, not SC) forbidden outcomes are expected
// and do not change the status; with --compare only the isotach runs decide it.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iso/iso.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tools/litmus/catalogue.hpp"
#include "tools/litmus/report.hpp"
#include "tools/litmus/runner.hpp"
#include "tools/trace_view/chrome_trace.hpp"
#include "tools/trace_view/logical_time_page.hpp"

namespace {

namespace fs = std::filesystem;

struct arguments {
  std::vector<std::string> tests;
  iso::litmus::run_options run;
  std::string catalogue;
  bool list = false;
  bool show = false;
  bool fit = false;
  bool relaxed = false;
  bool compare = false;
  std::string html;
  std::string chrome_trace;
};

void usage() {
  std::fprintf(stderr,
               "usage: isorun -n N -- iso-litmus [options] TEST...\n"
               "       iso-litmus --list | --show TEST...\n"
               "  TEST               a catalogue name (SB, MP, ...; 'all' for every one) or a\n"
               "                     .litmus file\n"
               "  --iterations N     runs of each test (default 100)\n"
               "  --seed N           seed of the placements (default 1)\n"
               "  --max-delay-us N   random delay before each isochron, 0..N us (default 20)\n"
               "  --catalogue DIR    where the catalogue's .litmus files are\n"
               "  --fit              skip (and name) tests with more processes than nodes\n"
               "  --html FILE        one run drawn as an HTML page (the first forbidden one,\n"
               "                     else the first matching exists, else the first run);\n"
               "                     with several tests FILE gets -<test> before .html\n"
               "  --chrome-trace FILE  the same run as Chrome trace JSON\n"
               "  --relaxed          run in relaxed mode (options::relaxed): NOT sequentially\n"
               "                     consistent, to show the outcomes SC forbids; exit 0\n"
               "  --compare          run each test under isotach, then in relaxed mode (the same\n"
               "                     placements and delays), and print both counts in one\n"
               "                     table; the exit status is the isotach runs' (--html and\n"
               "                     --chrome-trace draw the relaxed run)\n");
}

bool parse_number(const char* text, std::uint64_t max, std::uint64_t& out) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || text[0] == '-' || v > max) return false;
  out = v;
  return true;
}

std::optional<arguments> parse_arguments(int argc, char** argv) {
  arguments a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::uint64_t min, std::uint64_t max, std::uint64_t& out) {
      if (i + 1 >= argc || !parse_number(argv[i + 1], max, out) || out < min) {
        std::fprintf(stderr, "iso-litmus: %s takes a whole number from %llu to %llu\n", arg.c_str(),
                     static_cast<unsigned long long>(min), static_cast<unsigned long long>(max));
        return false;
      }
      ++i;
      return true;
    };
    std::uint64_t n = 0;
    if (arg == "--iterations") {
      if (!value(1, 1'000'000, n)) return std::nullopt;
      a.run.iterations = static_cast<std::uint32_t>(n);
    } else if (arg == "--seed") {
      if (!value(0, ~0ULL, n)) return std::nullopt;
      a.run.seed = n;
    } else if (arg == "--max-delay-us") {
      if (!value(0, 1'000'000, n)) return std::nullopt;
      a.run.max_delay_us = static_cast<std::uint32_t>(n);
    } else if (arg == "--html" && i + 1 < argc) {
      a.html = argv[++i];
    } else if (arg == "--chrome-trace" && i + 1 < argc) {
      a.chrome_trace = argv[++i];
    } else if (arg == "--catalogue" && i + 1 < argc) {
      a.catalogue = argv[++i];
    } else if (arg == "--list") {
      a.list = true;
    } else if (arg == "--show") {
      a.show = true;
    } else if (arg == "--fit") {
      a.fit = true;
    } else if (arg == "--relaxed") {
      a.relaxed = true;
    } else if (arg == "--compare") {
      a.compare = true;
    } else if (arg == "--help" || arg == "-h") {
      usage();
      return std::nullopt;
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "iso-litmus: unknown option '%s'\n", arg.c_str());
      usage();
      return std::nullopt;
    } else {
      a.tests.push_back(arg);
    }
  }
  if (a.relaxed && a.compare) {
    std::fprintf(stderr,
                 "iso-litmus: --relaxed and --compare exclude each other (--compare runs both "
                 "modes)\n");
    return std::nullopt;
  }
  if (a.tests.empty() && !a.list) {
    std::fprintf(stderr, "iso-litmus: name at least one test (or 'all'; --list shows them)\n");
    return std::nullopt;
  }
  return a;
}

std::string default_catalogue() {
  if (const char* env = std::getenv("ISO_LITMUS_CATALOGUE")) return env;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "share/iso/litmus";
  return (self.parent_path().parent_path() / "share" / "iso" / "litmus").string();
}

// `file` for one test; "a/b-SB.html" for test SB of several.
std::string output_name(const std::string& file, const std::string& test, bool several) {
  if (!several) return file;
  const fs::path p(file);
  return (p.parent_path() / (p.stem().string() + "-" + test + p.extension().string())).string();
}

bool write_file(const std::string& path, const std::string& text) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "iso-litmus: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
    return false;
  }
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  return std::fclose(f) == 0 && ok;
}

// How relaxed mode (options::relaxed) moves what the picture draws.
constexpr const char* kRelaxedPictureNote =
    "RELAXED MODE: each write is drawn where it was first applied (an isochron's box sits at "
    "its earliest operation: its writes at the issuer, right after the pulse that node's copies "
    "stood at when it was issued; at another node they were applied when they arrived, before "
    "the pulse drawn), and a read served at once from its node's own copies sits after the pulse "
    "those copies stood at. Reads of another node's copy still execute at their logical time, "
    "where they may see writes drawn below them. The boxes are not one global order: the red "
    "cycle shows why none exists.";

// The kept run of a test as a picture's input.
iso::trace_view::history_view view_of(const iso::litmus::test& t, const iso::litmus::test_result& r,
                                      std::uint32_t nodes, bool relaxed) {
  const std::string outcome = iso::litmus::format_outcome(t, r.kept.result);
  const bool allowed = r.allowed.contains(r.kept.result);
  std::map<std::uint32_t, std::string> notes;
  for (std::size_t p = 0; p < r.kept.process_node.size(); ++p) {
    notes[r.kept.process_node[p]] = "P" + std::to_string(p);
  }
  return {.title = t.name + ", run " + std::to_string(r.kept.iteration) + " of " +
                   std::to_string(r.runs) + " (" + std::to_string(nodes) + " nodes, " +
                   (relaxed ? "RELAXED MODE: not sequentially consistent)" : "isotach)"),
          .outcome = outcome,
          .verdict =
              "outcome " + outcome + ": " + (allowed ? "allowed under SC" : "FORBIDDEN under SC"),
          .nodes = nodes,
          .events = r.kept.events,
          .names = r.kept.names,
          .judgement = r.kept.judgement,
          .node_notes = notes,
          .note = relaxed ? kRelaxedPictureNote : ""};
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<arguments> args = parse_arguments(argc, argv);
  if (!args) return 2;
  const iso::litmus::catalogue cat(args->catalogue.empty() ? default_catalogue() : args->catalogue);
  if (args->list) {
    for (const std::string& name : cat.names()) std::printf("%s\n", name.c_str());
    return cat.names().empty() ? 2 : 0;
  }
  std::vector<iso::litmus::test> tests;
  for (const std::string& wanted : args->tests) {
    std::string error;
    if (!cat.load(wanted, tests, error)) {
      std::fprintf(stderr, "iso-litmus: %s\n", error.c_str());
      return 2;
    }
  }
  if (args->show) {
    for (const auto& t : tests) std::fputs(iso::litmus::show_test(t).c_str(), stdout);
    return 0;
  }

  iso::options opts;
  opts.trace = true;
  opts.page_variables = 1;  // one copyset per variable: placements vary per location
  // --compare: the job asks for relaxed mode, and each test first runs with it switched off.
  opts.relaxed = args->relaxed || args->compare;
  bool failed = false;
  const int status = iso::run(argc, argv, opts, [&](iso::node& node) {
    std::vector<const iso::litmus::test*> runnable;
    for (const auto& t : tests) {
      if (t.processes.size() <= node.count()) {
        runnable.push_back(&t);
      } else if (args->fit) {
        if (node.id() == 0) {
          std::printf("%s skipped: it needs %zu nodes\n", t.name.c_str(), t.processes.size());
        }
      } else {
        throw iso::error(iso::error_code::invalid_argument,
                         t.name + " needs " + std::to_string(t.processes.size()) +
                             " processes, one per node; this job has " +
                             std::to_string(node.count()) + " (isorun -n " +
                             std::to_string(t.processes.size()) + " or more)");
      }
    }
    std::vector<iso::litmus::summary_row> summary;
    std::vector<iso::litmus::comparison_row> comparison;
    for (const iso::litmus::test* tp : runnable) {
      const iso::litmus::test& t = *tp;
      std::optional<iso::litmus::test_result> under_isotach;
      if (args->compare) {
        // Every isochron of an earlier run has executed everywhere (run_test ends with a
        // barrier); the barrier after the switch keeps the modes' runs apart.
        node.set_relaxed(false);
        node.barrier();
        under_isotach = iso::litmus::run_test(node, t, args->run);
        node.set_relaxed(true);
        node.barrier();
      }
      const iso::litmus::test_result r = iso::litmus::run_test(node, t, args->run);
      if (node.id() != 0) continue;
      if (under_isotach) {
        std::fputs(iso::litmus::format_comparison(t, *under_isotach, r, node.count()).c_str(),
                   stdout);
        comparison.push_back(
            {iso::litmus::summarize(t, *under_isotach), iso::litmus::summarize(t, r)});
        if (iso::litmus::isotach_failed(*under_isotach)) failed = true;
      } else {
        std::fputs(iso::litmus::format_table(t, r, node.count(), args->relaxed).c_str(), stdout);
        summary.push_back(iso::litmus::summarize(t, r));
        if (!args->relaxed && iso::litmus::isotach_failed(r)) failed = true;
      }
      const bool relaxed = args->relaxed || args->compare;
      const bool several = runnable.size() > 1;
      if (!args->html.empty() &&
          !write_file(output_name(args->html, t.name, several),
                      iso::trace_view::logical_time_page(view_of(t, r, node.count(), relaxed)))) {
        failed = true;
      }
      if (!args->chrome_trace.empty() &&
          !write_file(output_name(args->chrome_trace, t.name, several),
                      iso::trace_view::chrome_trace_json(view_of(t, r, node.count(), relaxed)))) {
        failed = true;
      }
    }
    if (node.id() == 0) {
      std::fputs(args->compare
                     ? iso::litmus::format_comparison_summary(comparison, node.count()).c_str()
                     : iso::litmus::format_summary(summary, node.count(), args->relaxed).c_str(),
                 stdout);
      std::fflush(stdout);
    }
  });
  if (status != 0) return status;
  return failed ? 1 : 0;
}
