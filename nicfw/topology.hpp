// The logical topology of the emulated isotach network: which switch each node attaches to,
// how switches link into a tree, which NIC hosts each switch's token manager (TM), and the
// logical distances that follow. Immutable once built; every query is cheap.
//
//   ISO_ASSIGN_OR_RETURN(iso::nicfw::topology topo, iso::nicfw::load_topology(path, nodes));
//   std::uint32_t lag = topo.distance(me, peer);  // pulses a message needs, at least
//
// The text format is documented in nicfw/topology.proto; examples are in nicfw/examples/.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace iso::nicfw {

namespace config {
class Topology;  // generated from nicfw/topology.proto
}  // namespace config

// tokens_per_loop is limited so that distances (and the token counts built on them) stay
// small; a loop longer than this has no use in the emulation.
inline constexpr std::uint32_t max_tokens_per_loop = 8;
inline constexpr std::uint32_t default_tokens_per_loop = 2;

struct switch_info {
  std::string name;
  std::vector<std::uint32_t> nodes;       // attached nodes, ascending
  std::vector<std::uint32_t> neighbours;  // adjacent switch indices, ascending
  std::uint32_t tm_host = 0;              // node whose NIC runs this switch's TM
  // Every attached node's NIC runs a copy of the TM, which serves that node only (see
  // replicate_tm in nicfw/topology.proto); tm_host is then unused.
  bool replicated_tm = false;
};

class topology {
 public:
  // One switch holding every node, its TM replicated on every node. Requires nodes >= 1 and
  // 1 <= tokens_per_loop <= max_tokens_per_loop (callers check user input first).
  static topology single_switch(std::uint32_t nodes,
                                std::uint32_t tokens_per_loop = default_tokens_per_loop);

  [[nodiscard]] std::uint32_t nodes() const { return nodes_; }
  [[nodiscard]] std::uint32_t tokens_per_loop() const { return tokens_per_loop_; }
  [[nodiscard]] const std::vector<switch_info>& switches() const { return switches_; }

  // The switch index `node` attaches to.
  [[nodiscard]] std::uint32_t switch_of(std::uint32_t node) const;

  // Switches on the path from switch `from` to switch `to`, both ends included (1 when
  // from == to).
  [[nodiscard]] std::uint32_t switches_on_path(std::uint32_t from, std::uint32_t to) const;

  // Logical distance between nodes: switches_on_path(switch_of(a), switch_of(b)) *
  // tokens_per_loop for a != b, 0 for a == b. O(1).
  [[nodiscard]] std::uint32_t distance(std::uint32_t a, std::uint32_t b) const;

  // The largest distance between any two nodes (0 for a one-node job).
  [[nodiscard]] std::uint32_t diameter() const { return diameter_; }

  // The switch adjacent to `from` on the path towards `to` (from != to; `from` itself when
  // they are equal).
  [[nodiscard]] std::uint32_t next_switch(std::uint32_t from, std::uint32_t to) const;

  // The TMs this node's NIC hosts (switch indices), ascending; a replicated TM counts for
  // every attached node.
  [[nodiscard]] std::vector<std::uint32_t> tms_hosted_by(std::uint32_t node) const;

  // The nodes whose NICs run a TM for `sw`: its tm_host, or every attached node.
  [[nodiscard]] std::vector<std::uint32_t> tm_nodes(std::uint32_t sw) const;

  // The node whose TM sends `node` its TM tokens: its switch's tm_host, or `node` itself
  // when that TM is replicated.
  [[nodiscard]] std::uint32_t tm_serving(std::uint32_t node) const;

 private:
  friend absl::StatusOr<topology> build_topology(const config::Topology& config,
                                                 std::uint32_t nodes);

  // `switches` must already form a tree that holds every node exactly once; derives the
  // node-to-switch map, the path tables and the diameter.
  topology(std::uint32_t nodes, std::uint32_t tokens_per_loop, std::vector<switch_info> switches);

  [[nodiscard]] std::size_t pair_index(std::uint32_t from, std::uint32_t to) const {
    return static_cast<std::size_t>(from) * switches_.size() + to;
  }

  std::uint32_t nodes_ = 0;
  std::uint32_t tokens_per_loop_ = default_tokens_per_loop;
  std::vector<switch_info> switches_;
  std::vector<std::uint32_t> switch_of_;  // by node
  // Switch-by-switch tables (row `from`, column `to`): a tree has few switches, and the
  // tables make distance() and next_switch() constant time.
  std::vector<std::uint32_t> path_switches_;
  std::vector<std::uint32_t> next_switch_;
  std::uint32_t diameter_ = 0;
};

// Validates an already parsed configuration for a job of `nodes` nodes (the rules are in
// nicfw/topology.proto). Errors are InvalidArgument and name the offending value.
absl::StatusOr<topology> build_topology(const config::Topology& config, std::uint32_t nodes);

// Parses the text format for a job of `nodes` nodes and validates it. Syntax errors give
// the 1-based line and column.
absl::StatusOr<topology> parse_topology(std::string_view text, std::uint32_t nodes);

// Reads the file, then parse_topology; errors name the file.
absl::StatusOr<topology> load_topology(const std::string& path, std::uint32_t nodes);

}  // namespace iso::nicfw
