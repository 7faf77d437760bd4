#include "nicfw/topology.hpp"

#include <fcntl.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/check.hpp"
#include "base/errno_status.hpp"
#include "base/status_macros.hpp"
#include "nicfw/topology.pb.h"

namespace iso::nicfw {
namespace {

constexpr std::uint32_t no_switch = std::numeric_limits<std::uint32_t>::max();

// Keeps the first error only: the text parser stops at its first error anyway, and later
// messages would only describe the fallout.
class first_error_collector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (error_) return;
    // The parser counts from 0; editors and people count from 1.
    error_ = absl::StrFormat("topology line %d, column %d: %s", line + 1, column + 1, message);
  }
  [[nodiscard]] const std::optional<std::string>& error() const { return error_; }

 private:
  std::optional<std::string> error_;
};

// The switches with their names, attached nodes and (undirected, deduplicated) neighbours
// filled in from the configuration, after every per-switch rule has been checked. tm_host
// is left to the caller, which needs the path tables to place absent ones.
absl::Status collect_switches(const config::Topology& config, std::uint32_t nodes,
                              std::vector<switch_info>& switches) {
  const auto count = static_cast<std::uint32_t>(config.switch__size());
  if (count == 0) {
    return absl::InvalidArgumentError("the topology has no switches; it needs at least one");
  }
  switches.assign(count, switch_info{});

  std::map<std::string, std::uint32_t, std::less<>> index_of;
  for (std::uint32_t s = 0; s < count; ++s) {
    const std::string& name = config.switch_(static_cast<int>(s)).name();
    if (name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("switch %u (counting from 0) has an empty name", s));
    }
    const auto [it, inserted] = index_of.emplace(name, s);
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "switch name \"%s\" is used twice (switches %u and %u)", name, it->second, s));
    }
    switches[s].name = name;
  }

  std::vector<std::uint32_t> owner(nodes, no_switch);
  for (std::uint32_t s = 0; s < count; ++s) {
    const config::Switch& sw = config.switch_(static_cast<int>(s));
    for (const std::uint32_t node : sw.node()) {
      if (node >= nodes) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "switch \"%s\" lists node %u but the job has %u nodes", sw.name(), node, nodes));
      }
      if (owner[node] == s) {
        return absl::InvalidArgumentError(
            absl::StrFormat("switch \"%s\" lists node %u twice", sw.name(), node));
      }
      if (owner[node] != no_switch) {
        return absl::InvalidArgumentError(
            absl::StrFormat("node %u is attached to two switches, \"%s\" and \"%s\"", node,
                            switches[owner[node]].name, sw.name()));
      }
      owner[node] = s;
      switches[s].nodes.push_back(node);
    }
    std::sort(switches[s].nodes.begin(), switches[s].nodes.end());

    if (sw.has_tm_host() && sw.tm_host() >= nodes) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "switch \"%s\" has tm_host %u but the job has %u nodes", sw.name(), sw.tm_host(), nodes));
    }
    if (sw.replicate_tm() && sw.has_tm_host()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "switch \"%s\" has both tm_host and replicate_tm; a replicated TM runs on every "
          "attached node",
          sw.name()));
    }

    for (const std::string& link : sw.link()) {
      const auto it = index_of.find(link);
      if (it == index_of.end()) {
        return absl::InvalidArgumentError(
            absl::StrFormat("switch \"%s\" links to unknown switch \"%s\"", sw.name(), link));
      }
      if (it->second == s) {
        return absl::InvalidArgumentError(
            absl::StrFormat("switch \"%s\" links to itself", sw.name()));
      }
      // Either end may list the link, so record it on both.
      switches[s].neighbours.push_back(it->second);
      switches[it->second].neighbours.push_back(s);
    }
  }
  for (std::uint32_t s = 0; s < count; ++s) {
    switch_info& sw = switches[s];
    std::sort(sw.neighbours.begin(), sw.neighbours.end());
    sw.neighbours.erase(std::unique(sw.neighbours.begin(), sw.neighbours.end()),
                        sw.neighbours.end());
    const config::Switch& in = config.switch_(static_cast<int>(s));
    if (in.has_replicate_tm()) {
      sw.replicated_tm = in.replicate_tm();
      if (sw.replicated_tm && !sw.neighbours.empty()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "switch \"%s\" replicates its TM but has links; only a switch without links can "
            "(link tokens would have to reach every copy)",
            sw.name));
      }
      if (sw.replicated_tm && sw.nodes.empty()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "switch \"%s\" replicates its TM but has no nodes to run the copies", sw.name));
      }
    } else {
      sw.replicated_tm = !in.has_tm_host() && sw.neighbours.empty() && !sw.nodes.empty();
    }
  }

  for (std::uint32_t node = 0; node < nodes; ++node) {
    if (owner[node] == no_switch) {
      return absl::InvalidArgumentError(
          absl::StrFormat("node %u is attached to no switch (the job has %u nodes)", node, nodes));
    }
  }
  return absl::OkStatus();
}

// The switch graph must be a tree: counts that travel with tokens are summed along the
// unique path between two switches, and a cycle would count them twice. Any edge that a
// breadth-first walk does not use closes a cycle through both of its ends.
absl::Status check_tree(const std::vector<switch_info>& switches) {
  const auto count = static_cast<std::uint32_t>(switches.size());
  std::vector<std::uint32_t> parent(count, no_switch);
  std::vector<bool> seen(count, false);
  std::vector<std::uint32_t> queue;
  queue.reserve(count);
  // A component is walked whole before it is reported as disconnected, so that a cycle in
  // it is named first.
  for (std::uint32_t root = 0; root < count; ++root) {
    if (seen[root]) continue;
    seen[root] = true;
    queue.assign(1, root);
    for (std::size_t head = 0; head < queue.size(); ++head) {
      const std::uint32_t u = queue[head];
      for (const std::uint32_t v : switches[u].neighbours) {
        if (v == parent[u]) continue;
        if (seen[v]) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "the switch links form a cycle through switches \"%s\" and \"%s\"; they must "
              "form a tree",
              switches[std::min(u, v)].name, switches[std::max(u, v)].name));
        }
        seen[v] = true;
        parent[v] = u;
        queue.push_back(v);
      }
    }
    if (root != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "switch \"%s\" is not connected to switch \"%s\"; the switch links must form a tree",
          switches[root].name, switches[0].name));
    }
  }
  return absl::OkStatus();
}

}  // namespace

topology::topology(std::uint32_t nodes, std::uint32_t tokens_per_loop,
                   std::vector<switch_info> switches)
    : nodes_(nodes), tokens_per_loop_(tokens_per_loop), switches_(std::move(switches)) {
  const auto count = static_cast<std::uint32_t>(switches_.size());
  switch_of_.assign(nodes_, 0);
  for (std::uint32_t s = 0; s < count; ++s) {
    for (const std::uint32_t node : switches_[s].nodes) switch_of_[node] = s;
  }

  // One breadth-first walk from every switch; a path count of 0 marks "not reached yet".
  path_switches_.assign(static_cast<std::size_t>(count) * count, 0);
  next_switch_.assign(static_cast<std::size_t>(count) * count, 0);
  std::vector<std::uint32_t> queue;
  queue.reserve(count);
  for (std::uint32_t root = 0; root < count; ++root) {
    path_switches_[pair_index(root, root)] = 1;
    next_switch_[pair_index(root, root)] = root;
    queue.assign(1, root);
    for (std::size_t head = 0; head < queue.size(); ++head) {
      const std::uint32_t u = queue[head];
      for (const std::uint32_t v : switches_[u].neighbours) {
        if (path_switches_[pair_index(root, v)] != 0) continue;
        path_switches_[pair_index(root, v)] = path_switches_[pair_index(root, u)] + 1;
        // The first hop out of root is inherited by everything beyond it.
        next_switch_[pair_index(root, v)] = u == root ? v : next_switch_[pair_index(root, u)];
        queue.push_back(v);
      }
    }
  }

  // Only switches with nodes count: a relay switch at the edge is no endpoint of a distance.
  std::uint32_t widest = 0;
  for (std::uint32_t a = 0; a < count; ++a) {
    if (switches_[a].nodes.empty()) continue;
    if (switches_[a].nodes.size() >= 2) widest = std::max(widest, 1u);
    for (std::uint32_t b = a + 1; b < count; ++b) {
      if (!switches_[b].nodes.empty()) {
        widest = std::max(widest, path_switches_[pair_index(a, b)]);
      }
    }
  }
  diameter_ = widest * tokens_per_loop_;
}

topology topology::single_switch(std::uint32_t nodes, std::uint32_t tokens_per_loop) {
  ISO_CHECK(nodes >= 1) << "a topology needs at least one node";
  ISO_CHECK(tokens_per_loop >= 1 && tokens_per_loop <= max_tokens_per_loop)
      << "tokens_per_loop " << tokens_per_loop << " is outside 1.." << max_tokens_per_loop;
  switch_info only;
  only.name = "s0";
  only.nodes.resize(nodes);
  std::iota(only.nodes.begin(), only.nodes.end(), 0u);
  only.tm_host = 0;
  only.replicated_tm = true;
  std::vector<switch_info> switches;
  switches.push_back(std::move(only));
  return topology(nodes, tokens_per_loop, std::move(switches));
}

std::uint32_t topology::switch_of(std::uint32_t node) const {
  ISO_DCHECK(node < nodes_) << "node " << node << " of " << nodes_;
  return switch_of_[node];
}

std::uint32_t topology::switches_on_path(std::uint32_t from, std::uint32_t to) const {
  ISO_DCHECK(from < switches_.size() && to < switches_.size()) << from << " -> " << to;
  return path_switches_[pair_index(from, to)];
}

std::uint32_t topology::distance(std::uint32_t a, std::uint32_t b) const {
  if (a == b) return 0;
  return switches_on_path(switch_of(a), switch_of(b)) * tokens_per_loop_;
}

std::uint32_t topology::next_switch(std::uint32_t from, std::uint32_t to) const {
  ISO_DCHECK(from < switches_.size() && to < switches_.size()) << from << " -> " << to;
  return next_switch_[pair_index(from, to)];
}

std::vector<std::uint32_t> topology::tms_hosted_by(std::uint32_t node) const {
  std::vector<std::uint32_t> hosted;
  for (std::uint32_t s = 0; s < switches_.size(); ++s) {
    const switch_info& sw = switches_[s];
    const bool hosts = sw.replicated_tm ? switch_of(node) == s : sw.tm_host == node;
    if (hosts) hosted.push_back(s);
  }
  return hosted;
}

std::vector<std::uint32_t> topology::tm_nodes(std::uint32_t sw) const {
  ISO_DCHECK(sw < switches_.size()) << "switch " << sw << " of " << switches_.size();
  if (switches_[sw].replicated_tm) return switches_[sw].nodes;
  return {switches_[sw].tm_host};
}

std::uint32_t topology::tm_serving(std::uint32_t node) const {
  const switch_info& sw = switches_[switch_of(node)];
  return sw.replicated_tm ? node : sw.tm_host;
}

absl::StatusOr<topology> build_topology(const config::Topology& config, std::uint32_t nodes) {
  if (nodes == 0) {
    return absl::InvalidArgumentError("a job needs at least one node, got 0");
  }
  if (config.tokens_per_loop() > max_tokens_per_loop) {
    return absl::InvalidArgumentError(
        absl::StrFormat("tokens_per_loop %u is above the maximum of %u", config.tokens_per_loop(),
                        max_tokens_per_loop));
  }
  const std::uint32_t tokens_per_loop =
      config.tokens_per_loop() == 0 ? default_tokens_per_loop : config.tokens_per_loop();

  std::vector<switch_info> switches;
  ISO_RETURN_IF_ERROR(collect_switches(config, nodes, switches));
  ISO_RETURN_IF_ERROR(check_tree(switches));

  topology topo(nodes, tokens_per_loop, std::move(switches));
  const auto count = static_cast<std::uint32_t>(topo.switches_.size());
  for (std::uint32_t s = 0; s < count; ++s) {
    const config::Switch& sw = config.switch_(static_cast<int>(s));
    if (sw.has_tm_host()) {
      topo.switches_[s].tm_host = sw.tm_host();
      continue;
    }
    // Nearest switch with nodes (itself first); on a tie the earlier switch wins. Every node
    // is attached somewhere and the tree is connected, so one is always found.
    std::uint32_t best = no_switch;
    for (std::uint32_t t = 0; t < count; ++t) {
      if (topo.switches_[t].nodes.empty()) continue;
      if (best == no_switch || topo.switches_on_path(s, t) < topo.switches_on_path(s, best)) {
        best = t;
      }
    }
    ISO_CHECK(best != no_switch) << "no switch has nodes in a validated topology";
    topo.switches_[s].tm_host = topo.switches_[best].nodes.front();
  }
  return topo;
}

absl::StatusOr<topology> parse_topology(std::string_view text, std::uint32_t nodes) {
  config::Topology config;
  first_error_collector errors;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(std::string(text), &config)) {
    return absl::InvalidArgumentError(
        errors.error().value_or("topology text could not be parsed (no detail given)"));
  }
  return build_topology(config, nodes);
}

absl::StatusOr<topology> load_topology(const std::string& path, std::uint32_t nodes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return base::errno_status(absl::StrFormat("open topology file \"%s\"", path));
  }
  std::string text;
  char buffer[4096];
  absl::Status read_status;
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got > 0) {
      text.append(buffer, static_cast<std::size_t>(got));
    } else if (got == 0) {
      break;
    } else if (errno != EINTR) {
      read_status = base::errno_status(absl::StrFormat("read topology file \"%s\"", path));
      break;
    }
  }
  ::close(fd);
  ISO_RETURN_IF_ERROR(read_status);

  absl::StatusOr<topology> topo = parse_topology(text, nodes);
  if (!topo.ok()) {
    return absl::Status(topo.status().code(),
                        absl::StrFormat("topology file \"%s\": %s", path, topo.status().message()));
  }
  return topo;
}

}  // namespace iso::nicfw
