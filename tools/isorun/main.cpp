// isorun: starts a job of N nodes on this host and supervises it. See usage_text().
#include <unistd.h>

#include <string>

#include "absl/strings/str_format.h"
#include "iso/options.hpp"
#include "tools/isorun/job.hpp"
#include "tools/isorun/options.hpp"
#include "tools/isorun/posix_io.hpp"

int main(int argc, char** argv) {
  using iso::isorun::parse_result;
  iso::isorun::ensure_standard_fds_open();
  const parse_result parsed = iso::isorun::parse_options(argc, argv);
  switch (parsed.what) {
    case parse_result::action::help:
      return iso::isorun::write_all(STDOUT_FILENO, iso::isorun::usage_text()) ? 0 : 1;
    case parse_result::action::print_config: {
      // The table every node reads its settings from, with the overrides in force here.
      std::string table = absl::StrFormat("%-22s %-10s %-9s %-33s %s\n", "setting", "value", "unit",
                                          "valid values", "meaning");
      for (const iso::option_description& d : iso::describe_options()) {
        table += absl::StrFormat("%-22s %-10s %-9s %-33s %s\n", d.name, d.value, d.unit, d.range,
                                 d.help);
      }
      return iso::isorun::write_all(STDOUT_FILENO, table) ? 0 : 1;
    }
    case parse_result::action::usage_error:
      iso::isorun::say(parsed.error);
      (void)iso::isorun::write_all(STDERR_FILENO, iso::isorun::usage_text());
      return 2;
    case parse_result::action::run:
      break;
  }
  return iso::isorun::run_job(parsed.opts);
}
