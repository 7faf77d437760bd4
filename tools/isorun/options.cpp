#include "tools/isorun/options.hpp"

#include <getopt.h>

#include <charconv>
#include <cmath>
#include <string_view>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"

namespace iso::isorun {
namespace {

constexpr int kTransportOption = 1000;
constexpr int kTimeoutOption = 1001;
constexpr int kTagOutputOption = 1002;
constexpr int kPrintConfigOption = 1003;
constexpr int kBindOption = 1004;

// Strict: the whole argument must be the number, with no sign, spaces or suffix, so that
// `-n 4x` is an error rather than 4.
std::optional<int> parse_node_count(std::string_view text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  if (value < 1 || value > kMaxNodes) return std::nullopt;
  return value;
}

std::optional<absl::Duration> parse_timeout(std::string_view text) {
  double seconds = 0;
  if (text.empty() || !absl::SimpleAtod(absl::string_view(text.data(), text.size()), &seconds)) {
    return std::nullopt;
  }
  if (!std::isfinite(seconds) || seconds <= 0) return std::nullopt;
  return absl::Seconds(seconds);
}

parse_result usage_error(std::string message) {
  parse_result result;
  result.what = parse_result::action::usage_error;
  result.error = std::move(message);
  return result;
}

}  // namespace

parse_result parse_options(int argc, char** argv) {
  static const option kLongOptions[] = {
      {"help", no_argument, nullptr, 'h'},
      {"nodes", required_argument, nullptr, 'n'},
      {"transport", required_argument, nullptr, kTransportOption},
      {"timeout", required_argument, nullptr, kTimeoutOption},
      {"tag-output", no_argument, nullptr, kTagOutputOption},
      {"print-config", no_argument, nullptr, kPrintConfigOption},
      {"bind", required_argument, nullptr, kBindOption},
      {nullptr, 0, nullptr, 0},
  };
  parse_result result;
  options& opts = result.opts;
  bool have_nodes = false;

  // We print our own messages (naming the bad value, followed by the usage), so getopt's
  // are silenced; the leading ':' makes a missing argument distinguishable from an unknown
  // option.
  opterr = 0;
  optind = 1;
  for (;;) {
    const int previous_optind = optind;
    const int c = getopt_long(argc, argv, "+:hn:", kLongOptions, nullptr);
    if (c == -1) break;
    switch (c) {
      case 'h':
        result.what = parse_result::action::help;
        return result;
      case kPrintConfigOption:
        result.what = parse_result::action::print_config;
        return result;
      case 'n': {
        const auto nodes = parse_node_count(optarg);
        if (!nodes) {
          return usage_error(
              absl::StrFormat("-n takes a node count from 1 to %d, not '%s'", kMaxNodes, optarg));
        }
        opts.nodes = *nodes;
        have_nodes = true;
        break;
      }
      case kTransportOption: {
        const std::string_view name = optarg;
        if (name == "shm") {
          opts.transport = transport_kind::shm;
        } else if (name == "inproc") {
          opts.transport = transport_kind::inproc;
        } else {
          return usage_error(
              absl::StrFormat("--transport takes 'shm' or 'inproc', not '%s'", optarg));
        }
        break;
      }
      case kTimeoutOption: {
        const auto timeout = parse_timeout(optarg);
        if (!timeout) {
          return usage_error(absl::StrFormat(
              "--timeout takes a number of seconds greater than 0, not '%s'", optarg));
        }
        opts.timeout = *timeout;
        break;
      }
      case kTagOutputOption:
        opts.tag_output = true;
        break;
      case kBindOption: {
        const std::string_view name = optarg;
        if (name != "auto" && name != "core" && name != "none") {
          return usage_error(
              absl::StrFormat("--bind takes 'auto', 'core' or 'none', not '%s'", optarg));
        }
        opts.binding = std::string(name);
        break;
      }
      case ':':
        return usage_error(
            absl::StrFormat("option '%s' needs a value", argv[optind - 1] ? argv[optind - 1] : ""));
      default: {
        // For an unknown long option optopt is 0 and the word itself is the last one getopt
        // consumed; for an unknown short option inside a cluster (-xv) optopt names it.
        if (optopt != 0) {
          return usage_error(absl::StrFormat("unknown option '-%c'", static_cast<char>(optopt)));
        }
        const int index = optind > previous_optind ? optind - 1 : previous_optind;
        return usage_error(
            absl::StrFormat("unknown option '%s'", index < argc ? argv[index] : "?"));
      }
    }
  }

  if (!have_nodes) return usage_error("missing -n, the number of nodes");
  if (optind >= argc) return usage_error("no program to run");
  opts.command.assign(argv + optind, argv + argc);
  result.what = parse_result::action::run;
  return result;
}

const char* usage_text() {
  return R"(usage: isorun -n N [--transport shm|inproc] [--bind auto|core|none] [--timeout S]
              [--tag-output] [--] program [args...]

Starts a job of N nodes of `program` on this host and waits for it.

options:
  -n, --nodes N        number of nodes, 1 to 4096 (required)
  --transport KIND     shm (default): one process per node, sharing a memory segment;
                       inproc: one process whose nodes are threads
  --bind HOW           core: node i runs on the i-th core isorun may use (its CPU
                       affinity), when there is one for every node (and for every NIC
                       thread); none: the scheduler places the nodes; auto (the default):
                       core for jobs of two or more nodes, one process each, that take
                       more than half of those cores. Sets ISO_BIND for the nodes (over
                       the environment's); node.status().binding says where each runs
  --timeout S          stop the job if it has not finished after S seconds (fractions
                       allowed); isorun then exits 124
  --tag-output         prefix every line a node writes with "[i] " (its node id)
  --print-config       print the runtime settings the nodes would use (from ISO_*
                       variables and defaults) and exit
  -h, --help           print this text and exit

environment of each node:
  ISO_RANK         the node id, 0 to N-1 (shm only)
  ISO_SIZE         N, the number of nodes
  ISO_TRANSPORT    shm or inproc
  ISO_JOB_ID       32 random hex characters, the same for every node of the job
  ISO_SHM_FD       an inherited descriptor of the job's shared memory segment, already
                   unlinked; node 0 sizes it (shm only)
  ISO_JOB_SECRET   a per-job secret the nodes prove membership with; isorun never prints it
  ISO_REPORT_FD    an inherited pipe on which the runtime tells isorun which node failed
                   first (shm only)
  ISO_OVERSUBSCRIBED  1 when N exceeds the cores isorun may use (its CPU affinity), else
                   0; isorun then says so on stderr, and nodes that wait for another sleep
                   until a packet comes instead of polling (ISO_WAIT=auto), unless fewer
                   of the others are busy than there are cores
  ISO_BIND         auto, core or none, as --bind says (only when --bind is given)

Each node is joined once: a second process claiming a node that is already running (a
second iso program run after the first in one node, a process that opened the segment
some other way) is refused. The runtime makes both descriptors close-on-exec when it joins,
so what an iso program starts does not inherit them.

Each node runs in a process group of its own (so it cannot read a terminal), and
stopping a node stops its whole group: what a node started goes with it. Whatever is left
in a node's group when the job ends is killed, and if isorun itself is killed, even with
SIGKILL, the nodes die with it and a small guardian process kills what they started.

If a node exits with a non-zero status or is killed, isorun names it, stops the other nodes
(SIGTERM, then SIGKILL 500 ms later) and exits with its status. When a node fails, the
others stop because of it and may exit first: isorun names the node that failed first.
SIGINT, SIGTERM or SIGHUP to isorun stops the job the same way.

exit status:
  0        every node exited 0
  1-125    the status of the node that failed (1: also when isorun cannot start the job)
  2        also: a usage error (isorun's own arguments)
  124      the job ran past --timeout
  126      the program was found but could not be executed
  127      the program was not found
  128+S    a node was killed by signal S, or isorun was interrupted by it (130 for SIGINT)
)";
}

}  // namespace iso::isorun
