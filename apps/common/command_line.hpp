// The command line of a bundled application: named whole-number flags (optionally powers
// of two), switches, a usage message, and errors that name the flag and the value.
//
//   long m = 16;
//   bool check = false;
//   iso::apps::command_line cli("fft", "1-D complex FFT of 2^m points (six-step)");
//   cli.add_count("--m", m, 2, 28, "log2 of the number of points");
//   cli.add_switch("--check", check, "check the result against the sequential version");
//   if (std::optional<int> status = cli.parse(argc, argv)) return *status;
//
// Used before iso::run: a bad command line ends the program before any node starts, with
// exit status 2 and a message on stderr saying what was wrong and how to call it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace iso::apps {

// The number of nodes of the job this process belongs to, known before iso::run: isorun
// passes it as ISO_SIZE (to every process of an shm job, and to the one process of an
// inproc job); 1 for a program started on its own. For refusing a size that cannot be
// split among the nodes with a usage message, before any node starts.
[[nodiscard]] unsigned job_nodes();

class command_line {
 public:
  command_line(std::string program, std::string summary);

  // `--name N`: a whole number from `min` to `max` (digits only); the default stays when
  // the flag is absent. With `power_of_two`, N must also be a power of two.
  void add_count(std::string name, long& value, long min, long max, std::string help,
                 bool power_of_two = false);
  // `--name`: sets `value` to true.
  void add_switch(std::string name, bool& value, std::string help);

  // Parses argv[1..]. Returns nothing when every argument was understood; otherwise the
  // exit status main should return: 0 after printing the usage for --help, 2 after
  // printing the problem and the usage to stderr.
  [[nodiscard]] std::optional<int> parse(int argc, char** argv);

  // Prints `problem` and the usage to stderr; returns 2 (the status for a bad command
  // line). For checks that involve several flags at once.
  [[nodiscard]] int refuse(const std::string& problem) const;

  // The usage message: one line per flag with its default and range.
  [[nodiscard]] std::string usage() const;
  [[nodiscard]] const std::string& program() const { return program_; }

 private:
  struct flag {
    std::string name;
    std::string help;
    long* count = nullptr;  // null for a switch
    bool* on = nullptr;
    long min = 0;
    long max = 0;
    long fallback = 0;
    bool power_of_two = false;
  };
  std::string program_;
  std::string summary_;
  std::vector<flag> flags_;
};

}  // namespace iso::apps
