#include "apps/common/command_line.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "apps/common/count_argument.hpp"

namespace iso::apps {
namespace {

// parse_count takes 1 and up; a range from 0 adds the one spelling of zero.
bool parse_in_range(const char* text, long min, long max, long& out) {
  if (min == 0 && std::strcmp(text, "0") == 0) {
    out = 0;
    return true;
  }
  long value = 0;
  if (!parse_count(text, max, value) || value < min) return false;
  out = value;
  return true;
}

}  // namespace

command_line::command_line(std::string program, std::string summary)
    : program_(std::move(program)), summary_(std::move(summary)) {
  flags_.push_back(flag{.name = "--help", .help = "print this message", .on = nullptr});
}

void command_line::add_count(std::string name, long& value, long min, long max, std::string help,
                             bool power_of_two) {
  flags_.push_back(flag{.name = std::move(name),
                        .help = std::move(help),
                        .count = &value,
                        .min = min,
                        .max = max,
                        .fallback = value,
                        .power_of_two = power_of_two});
}

void command_line::add_switch(std::string name, bool& value, std::string help) {
  flags_.push_back(flag{.name = std::move(name), .help = std::move(help), .on = &value});
}

std::optional<int> command_line::parse(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const char* const arg = argv[i];
    if (std::strcmp(arg, "--help") == 0 || std::strcmp(arg, "-h") == 0) {
      std::printf("%s", usage().c_str());
      return 0;
    }
    const flag* match = nullptr;
    for (const flag& f : flags_) {
      if (f.name == arg) match = &f;
    }
    if (match == nullptr) return refuse(std::string("unknown argument '") + arg + "'");
    if (match->on != nullptr) {
      *match->on = true;
      continue;
    }
    if (i + 1 >= argc) return refuse(match->name + " needs a value");
    const char* const text = argv[++i];
    long parsed = 0;
    if (!parse_in_range(text, match->min, match->max, parsed)) {
      return refuse(match->name + " takes a whole number from " + std::to_string(match->min) +
                    " to " + std::to_string(match->max) + ", not '" + text + "'");
    }
    if (match->power_of_two && !std::has_single_bit(static_cast<unsigned long>(parsed))) {
      return refuse(match->name + " must be a power of two, not " + std::to_string(parsed));
    }
    *match->count = parsed;
  }
  return std::nullopt;
}

int command_line::refuse(const std::string& problem) const {
  std::fprintf(stderr, "%s: %s\n%s", program_.c_str(), problem.c_str(), usage().c_str());
  return 2;
}

unsigned job_nodes() {
  const char* text = std::getenv("ISO_SIZE");
  long nodes = 1;
  if (text == nullptr || !parse_count(text, 1 << 20, nodes)) return 1;
  return static_cast<unsigned>(nodes);
}

std::string command_line::usage() const {
  std::string out = "usage: " + program_ + " [flags]\n  " + summary_ + "\n";
  for (const flag& f : flags_) {
    std::string line = "  " + f.name;
    if (f.count != nullptr) line += " N";
    line.resize(std::max<std::size_t>(line.size() + 1, 18), ' ');
    line += f.help;
    if (f.count != nullptr) {
      line += " (" + std::to_string(f.min) + " to " + std::to_string(f.max);
      if (f.power_of_two) line += ", a power of two";
      line += "; default " + std::to_string(f.fallback) + ")";
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace iso::apps
