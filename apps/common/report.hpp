// The lines every bundled application prints, in one format that people and
// tools/app-bench read alike:
//
//   fft: size 2^16 points (256 x 256), 2 nodes
//   fft: time 0.1234 s (parallel section)
//   fft: check PASSED (max error after inverse 2.1e-16; checksum ...)
//   fft: check FAILED: first difference at point 17: 0.5 != 0.25
//
// Plain functions on stdout, no runtime: the sequential versions print the same lines.
#pragma once

#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace iso::apps {

// The outcome of an application's own check.
struct check_result {
  bool passed = false;
  // What was measured when it passed (max error, checksum), or the first difference.
  std::string detail;
};

void print_size(const std::string& program, const std::string& size, unsigned nodes);
void print_time(const std::string& program, double seconds, const std::string& section);
// PASSED or FAILED with the detail; "check skipped" when `checked` is false.
void print_check(const std::string& program, const check_result& result);
void print_check_skipped(const std::string& program);

// Whether two doubles are the same bit for bit (the parallel versions compute exactly what
// the sequential ones do, so their checks compare so).
[[nodiscard]] inline bool identical(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

// printf into a std::string, for check details.
[[nodiscard]] std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// Seconds on a monotonic clock, for timing sections.
class stopwatch {
 public:
  stopwatch() : start_(std::chrono::steady_clock::now()) {}
  [[nodiscard]] double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

// Where a node's time goes: the time between enter() calls is added to the phase entered
// last. For finding out which part of a kernel the runtime makes slow (--phases).
class phase_timer {
 public:
  // Ends the current phase, if any, and starts `name` (a string literal).
  void enter(const char* name);
  // Ends the current phase.
  void stop();
  // "compute 1.234 s, barrier 0.100 s, ...", in the order phases were first entered.
  [[nodiscard]] std::string summary() const;

 private:
  struct phase {
    const char* name;
    double seconds;
  };
  std::vector<phase> phases_;
  std::size_t current_ = 0;
  bool running_ = false;
  std::chrono::steady_clock::time_point since_;
};

}  // namespace iso::apps
