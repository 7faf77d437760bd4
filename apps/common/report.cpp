#include "apps/common/report.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace iso::apps {

void print_size(const std::string& program, const std::string& size, unsigned nodes) {
  std::printf("%s: size %s, %u node%s\n", program.c_str(), size.c_str(), nodes,
              nodes == 1 ? "" : "s");
}

void print_time(const std::string& program, double seconds, const std::string& section) {
  std::printf("%s: time %.4f s (%s)\n", program.c_str(), seconds, section.c_str());
}

void print_check(const std::string& program, const check_result& result) {
  if (result.passed) {
    std::printf("%s: check PASSED (%s)\n", program.c_str(), result.detail.c_str());
  } else {
    std::printf("%s: check FAILED: %s\n", program.c_str(), result.detail.c_str());
  }
  std::fflush(stdout);
}

void print_check_skipped(const std::string& program) {
  std::printf("%s: check skipped (run with --check)\n", program.c_str());
}

std::string format(const char* fmt, ...) {
  char buffer[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buffer, sizeof buffer, fmt, args);
  va_end(args);
  return buffer;
}

void phase_timer::enter(const char* name) {
  stop();
  current_ = phases_.size();
  for (std::size_t i = 0; i < phases_.size(); ++i) {
    if (std::strcmp(phases_[i].name, name) == 0) current_ = i;
  }
  if (current_ == phases_.size()) phases_.push_back({name, 0.0});
  running_ = true;
  since_ = std::chrono::steady_clock::now();
}

void phase_timer::stop() {
  if (!running_) return;
  phases_[current_].seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - since_).count();
  running_ = false;
}

std::string phase_timer::summary() const {
  std::string out;
  for (const phase& p : phases_) {
    if (!out.empty()) out += ", ";
    out += format("%s %.3f s", p.name, p.seconds);
  }
  return out;
}

}  // namespace iso::apps
