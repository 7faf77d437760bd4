// A litmus test: a few processes, each a list of isochrons of reads and writes on shared
// locations, and a condition on the outcome. The text format follows herdtools7's:
//
//   ISO SB                                  <- the keyword ISO and the test's name
//   "Store buffering (Dekker)"              <- optional description
//   { x = 0; y = 0; }                       <- initial values (unlisted locations: 0)
//    P0      | P1      ;                    <- one column per process
//    x = 1   | y = 1   ;                    <- a write: location = value
//    r0 = y  | r0 = x  ;                    <- a read: register = location
//   exists (0:r0=0 /\ 1:r0=0)               <- the outcome asked about
//
// Each cell is one isochron; accesses in one cell separated by commas ("x = 1, r0 = y")
// form one isochron, executed atomically. An empty cell is nothing. The condition is a
// conjunction (/\) of register values (process:register=value) and final values of
// locations (location=value). Values written to a location must be unique, non-zero and
// differ from its initial value (the checker identifies writes by value). Lines starting
// with "(*" ... "*)" comments and blank lines are ignored.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace iso::litmus {

struct access {
  bool write = false;
  std::string location;
  std::string reg;         // reads only
  std::int64_t value = 0;  // writes only
};

using isochron_spec = std::vector<access>;

struct process {
  std::vector<isochron_spec> isochrons;
  std::vector<std::string> registers;  // in order of first use
};

// One term of the condition: a register of a process, or (process empty) a location.
struct term {
  std::optional<std::uint32_t> process;
  std::string name;
  std::int64_t value = 0;
};

struct test {
  std::string name;
  std::string description;
  std::vector<std::string> locations;  // in order of first use
  std::map<std::string, std::int64_t> initial;
  std::vector<process> processes;
  std::vector<term> exists;
  // Locations whose final value the condition asks about.
  [[nodiscard]] std::vector<std::string> observed_locations() const;
  [[nodiscard]] std::int64_t initial_value(const std::string& location) const;
};

// An error of a litmus file: where and what.
struct parse_error {
  std::string file;
  int line = 0;
  int column = 0;
  std::string message;
  [[nodiscard]] std::string to_string() const;  // "file:line:column: message"
};

// Parses `text` (from `file`, for messages). Returns the test or the first error.
struct parse_result {
  std::optional<test> parsed;
  parse_error error;
};
parse_result parse(const std::string& text, const std::string& file);

// Reads and parses a file; a file that cannot be read is an error at line 0.
parse_result parse_file(const std::string& path);

}  // namespace iso::litmus
