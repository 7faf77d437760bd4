#include "tools/bench_support/bench_driver.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "absl/strings/str_format.h"

namespace iso::bench {

bool collect(const std::string& command, sample_table& into, bool tolerate_exit) {
  return collect_indexed(command, {}, into, tolerate_exit);
}

std::string indexed_key(const std::string& key, int index) {
  return absl::StrFormat("%s/%d", key, index);
}

bool collect_indexed(const std::string& command, const std::vector<std::string>& indexed_keys,
                     sample_table& into, bool tolerate_exit) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return false;
  char line[512];
  while (std::fgets(line, sizeof(line), pipe) != nullptr) {
    std::istringstream in(line);
    std::string key;
    if (!(in >> key)) continue;
    const bool indexed =
        std::find(indexed_keys.begin(), indexed_keys.end(), key) != indexed_keys.end();
    int index = 0;
    double value = 0;
    if (indexed) {
      if (in >> index >> value) into[indexed_key(key, index)].push_back(value);
    } else if (in >> value) {
      into[key].push_back(value);
    }
  }
  const int status = ::pclose(pipe);
  return tolerate_exit || status == 0;
}

void print_header(const char* ours_name, const char* peer_name) {
  std::printf("%-34s %-26s %-26s %s\n", "", ours_name, peer_name, "ratio");
}

void print_row(const std::string& label, const std::optional<summary>& ours,
               const std::optional<summary>& peer) {
  std::string ratio = "-";
  if (ours && peer && peer->median > 0) {
    ratio = absl::StrFormat("%.1fx", ours->median / peer->median);
  }
  std::printf("%-34s %-26s %-26s %s\n", label.c_str(), cell(ours).c_str(), cell(peer).c_str(),
              ratio.c_str());
}

std::string program_directory() {
  return std::filesystem::canonical("/proc/self/exe").parent_path().string();
}

}  // namespace iso::bench
