#include "tools/bench/bench_driver.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <system_error>
#include <thread>

#include "absl/strings/str_format.h"

namespace iso::bench {

bool collect(const std::string& command, sample_table& into, bool tolerate_exit) {
  return collect_indexed(command, {}, into, tolerate_exit);
}

std::string cell(const std::optional<summary>& s, const char* format) {
  if (!s) return "-";
  const absl::ParsedFormat<'f'>* f = absl::ParsedFormat<'f'>::New(format).release();
  std::string out = absl::StrFormat("%s [%s-%s]", absl::StrFormat(*f, s->median),
                                    absl::StrFormat(*f, s->min), absl::StrFormat(*f, s->max));
  delete f;
  return out;
}

void print_header(const char* ours_name, const char* peer_name) {
  std::printf("%-34s %-26s %-26s %s\n", "", ours_name, peer_name, "ratio");
}

void print_row(const std::string& label, const std::optional<summary>& ours,
               const std::optional<summary>& peer) {
  std::string ratio = "-";
  if (ours && peer && peer->median > 0)
    ratio = absl::StrFormat("%.1fx", ours->median / peer->median);
  std::printf("%-34s %-26s %-26s %s\n", label.c_str(), cell(ours).c_str(), cell(peer).c_str(),
              ratio.c_str());
}

std::string program_directory() {
  return std::filesystem::canonical("/proc/self/exe").parent_path().string();
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

std::optional<bench_args> parse_bench_args(int argc, char** argv, const char* name,
                                           bool takes_nodes) {
  bench_args args;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      args.quick = true;
    } else if (std::strcmp(argv[i], "--worker") == 0) {
      args.as_worker = true;
    } else if (std::strcmp(argv[i], "--nodes") == 0 && i + 1 < argc) {
      if (!takes_nodes) {
        std::fprintf(stderr, "%s: measures exactly 2 nodes; --nodes is for iso-lat\n", name);
        return std::nullopt;
      }
      // Digits only, and no overflow: strtol would take " 3" and clamp a huge number.
      const char* const text = argv[++i];
      const char* const end = text + std::strlen(text);
      int nodes = 0;
      const auto [ptr, ec] = std::from_chars(text, end, nodes);
      if (ec != std::errc() || ptr != end || nodes < 2 || nodes > 64) {
        std::fprintf(stderr, "%s: --nodes takes a count from 2 to 64, not '%s'\n", name, argv[i]);
        return std::nullopt;
      }
      args.nodes = nodes;
    } else if (std::strcmp(argv[i], "--nic") == 0 && i + 1 < argc) {
      args.nic = argv[++i];
      if (args.nic == "thread") {
        args.placement = iso::nic_placement::thread;
      } else if (args.nic == "inline") {
        args.placement = iso::nic_placement::inline_poll;
      } else if (args.nic != "auto") {
        std::fprintf(stderr, "%s: --nic takes thread, inline or auto, not '%s'\n", name,
                     args.nic.c_str());
        return std::nullopt;
      }
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--nic thread|inline|auto] [--nodes N]\n", name);
      return std::nullopt;
    }
  }
  return args;
}

void serve_until(iso::node& node, iso::shared_var<std::int64_t> done, std::int64_t value) {
  for (;;) {
    for (int i = 0; i < 1000; ++i) node.poll();
    // With more processes than cores (the demo runs 4 on 2), a server that only spins
    // takes the measuring node's core for whole time slices.
    std::this_thread::yield();
    iso::isochron iso(node);
    auto flag = iso.read(done);  // a purely local isochron: the copy is here
    iso.end();
    if (flag.get() >= value) return;
  }
}

void set_done(iso::node& node, iso::shared_var<std::int64_t> done, std::int64_t value) {
  iso::isochron iso(node);
  iso.write(done, value);
  iso.end();
}

}  // namespace iso::bench
