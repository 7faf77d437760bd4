#include "runtime/config.hpp"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string_view>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "comm/fault_injection.hpp"
#include "nicfw/multicast_tree.hpp"

namespace iso::runtime {
namespace {

// The smallest ring the runtime works with: the comm layer accepts 256 bytes, but a ring
// carries packets of at most a quarter of its capacity less 16 bytes, and the runtime's
// largest packets that cannot be split (a token, an isochron marker with paranoid mode's
// fields, a fragment header with its first bytes) need more than 256 bytes leave. 1 KiB
// rings run every test of the suite.
constexpr std::uint64_t kMinRingCapacity = 1024;
constexpr std::uint64_t kMaxRingCapacity = std::uint64_t{1} << 30;
// Longer than any job should wait for a peer; longer waits overflow the clocks' arithmetic.
constexpr std::int64_t kMaxTimeoutMs = 7LL * 24 * 3600 * 1000;
constexpr std::uint64_t kMinCreditWindow = 4096;
constexpr std::uint64_t kMaxCreditWindow = std::uint64_t{1} << 30;
constexpr std::uint64_t kMaxWindowBytes = std::uint64_t{1} << 36;
constexpr std::uint64_t kMaxPageVariables = std::uint64_t{1} << 20;
constexpr std::int64_t kMaxNicSpinUs = 1'000'000;
constexpr char kTestFaultVariable[] = "ISO_TEST_FAULT";

struct setting {
  const char* name;   // ISO_<NAME>
  const char* field;  // the iso::options member, for errors about values set in code
  const char* unit;
  const char* range;  // the values that work, as the error messages and tables say it
  const char* help;
  // Reads the text of the environment variable into `o`; only the syntax is checked here.
  std::function<absl::Status(options&, const std::string&)> parse;
  // Whether the value in `o` is within `range`.
  std::function<bool(const options&)> valid;
  std::function<std::string(const options&)> print;
};

absl::Status not_a_number(const char* name, const std::string& text, const char* unit) {
  return absl::InvalidArgumentError(
      absl::StrFormat("%s is '%s', not a number of %s", name, text, unit));
}

// A whole-number setting held in `member` of type T, from `lo` to `hi`, optionally only
// powers of two.
template <typename T>
setting number_setting(const char* name, const char* field, const char* unit, const char* range,
                       const char* help, T options::*member, std::uint64_t lo, std::uint64_t hi,
                       bool power_of_two = false) {
  return {name,
          field,
          unit,
          range,
          help,
          [name, unit, member](options& o, const std::string& text) {
            std::uint64_t value = 0;
            if (!absl::SimpleAtoi(text, &value) || value > std::numeric_limits<T>::max()) {
              return not_a_number(name, text, unit);
            }
            o.*member = static_cast<T>(value);
            return absl::OkStatus();
          },
          [member, lo, hi, power_of_two](const options& o) {
            const auto value = static_cast<std::uint64_t>(o.*member);
            return value >= lo && value <= hi && (!power_of_two || std::has_single_bit(value));
          },
          [member](const options& o) { return absl::StrFormat("%u", o.*member); }};
}

// A duration setting held in `member`, a whole number of `Duration` units, from lo to hi.
template <typename Duration>
setting duration_setting(const char* name, const char* field, const char* unit, const char* range,
                         const char* help, Duration options::*member, std::int64_t lo,
                         std::int64_t hi) {
  return {name,
          field,
          unit,
          range,
          help,
          [name, unit, member](options& o, const std::string& text) {
            std::int64_t value = 0;
            if (!absl::SimpleAtoi(text, &value)) return not_a_number(name, text, unit);
            // Clamped only to keep the representation; valid() rejects what is out of range.
            o.*member = Duration(std::clamp<std::int64_t>(value, -1, kMaxTimeoutMs * 1000 + 1));
            return absl::OkStatus();
          },
          [member, lo, hi](const options& o) {
            const auto value = (o.*member).count();
            return value >= lo && value <= hi;
          },
          [member](const options& o) { return absl::StrFormat("%d", (o.*member).count()); }};
}

// An on/off setting, written 0 or 1, held in `member`.
setting flag_setting(const char* name, const char* field, const char* help, bool options::*member) {
  return {name,
          field,
          "0|1",
          "0 or 1",
          help,
          [name, member](options& o, const std::string& text) {
            if (text != "0" && text != "1") {
              return absl::InvalidArgumentError(
                  absl::StrFormat("%s is '%s'; expected 0 or 1", name, text));
            }
            o.*member = text == "1";
            return absl::OkStatus();
          },
          [](const options&) { return true; },
          [member](const options& o) { return std::string(o.*member ? "1" : "0"); }};
}

// One of a few names, held in `member` of enum type E: `choices` pairs each name with its
// value; `range` lists the names as the errors say them.
template <typename E>
struct named_value {
  const char* name;
  E value;
};

template <typename E>
setting choice_setting(const char* name, const char* field, const char* range, const char* help,
                       E options::*member, std::vector<named_value<E>> choices) {
  return {name,
          field,
          "name",
          range,
          help,
          [name, range, member, choices](options& o, const std::string& text) {
            for (const named_value<E>& c : choices) {
              if (text == c.name) {
                o.*member = c.value;
                return absl::OkStatus();
              }
            }
            return absl::InvalidArgumentError(
                absl::StrFormat("%s is '%s'; expected %s", name, text, range));
          },
          [member, choices](const options& o) {
            return std::any_of(choices.begin(), choices.end(),
                               [&](const named_value<E>& c) { return c.value == o.*member; });
          },
          [member, choices](const options& o) {
            for (const named_value<E>& c : choices) {
              if (c.value == o.*member) return std::string(c.name);
            }
            return absl::StrFormat("%d (no such value)", static_cast<int>(o.*member));
          }};
}

const std::vector<setting>& settings() {
  static const std::vector<setting> table = {
      number_setting("ISO_RING_CAPACITY", "ring_capacity", "bytes",
                     "power of two, 1024 to 1073741824",
                     "buffer per ordered pair of nodes; a message may use a quarter of it",
                     &options::ring_capacity, kMinRingCapacity, kMaxRingCapacity, true),
      duration_setting("ISO_JOIN_TIMEOUT_MS", "join_timeout", "ms", "1 to 604800000",
                       "how long start-up waits for every node of the job", &options::join_timeout,
                       1, kMaxTimeoutMs),
      duration_setting("ISO_BARRIER_TIMEOUT_MS", "barrier_timeout", "ms", "1 to 604800000",
                       "how long a barrier waits before the job fails", &options::barrier_timeout,
                       1, kMaxTimeoutMs),
      duration_setting("ISO_OBJECT_CALL_TIMEOUT_MS", "object_call_timeout", "ms", "1 to 604800000",
                       "how long a call to a single copy waits for a sign of life from its owner",
                       &options::object_call_timeout, 1, kMaxTimeoutMs),
      choice_setting<nic_mode>(
          "ISO_NIC", "nic", "auto, thread or inline",
          "where the emulated NIC runs: its own thread, or inline in the application's polls",
          &options::nic,
          {{"auto", nic_mode::automatic},
           {"thread", nic_mode::thread},
           {"inline", nic_mode::inline_poll}}),
      duration_setting("ISO_NIC_SPIN_US", "nic_spin", "us", "0 to 1000000",
                       "how long an idle NIC thread with a core of its own spins before it "
                       "sleeps on its doorbell (one that shares a core sleeps at once)",
                       &options::nic_spin, 0, kMaxNicSpinUs),
      choice_setting<wait_mode>(
          "ISO_WAIT", "wait", "auto, spin or block",
          "how a node waits for another: spin then yield, or sleep until a packet comes; auto: "
          "block when the job has more nodes than cores, but poll and yield while the host's "
          "other nodes leave a core to spare",
          &options::wait,
          {{"auto", wait_mode::automatic}, {"spin", wait_mode::spin}, {"block", wait_mode::block}}),
      choice_setting<cpu_binding>(
          "ISO_BIND", "binding", "auto, core or none",
          "bind each node's thread to a core of its own; auto: for isorun's jobs of two or more "
          "nodes that take more than half of its cores",
          &options::binding,
          {{"auto", cpu_binding::automatic},
           {"core", cpu_binding::core},
           {"none", cpu_binding::none}}),
      {"ISO_TOPOLOGY", "topology_file", "path", "a topology file, or empty",
       "the logical topology file (protobuf text); empty: one switch",
       [](options& o, const std::string& text) {
         o.topology_file = text;
         return absl::OkStatus();
       },
       [](const options&) { return true; },  // the loader names a bad file
       [](const options& o) { return o.topology_file; }},
      number_setting("ISO_PAGE_VARIABLES", "page_variables", "variables",
                     "power of two, 1 to 1048576",
                     "isotach memory is placed in pages of this many variables, each with a "
                     "copyset; every node of a job must use the same",
                     &options::page_variables, 1, kMaxPageVariables, true),
      flag_setting("ISO_TRACE", "trace", "record every executed operation (node::trace)",
                   &options::trace),
      number_setting("ISO_CREDIT_WINDOW", "credit_window", "bytes", "4096 to 1073741824",
                     "flow control: bytes of one class a node may have in flight to another",
                     &options::credit_window, kMinCreditWindow, kMaxCreditWindow),
      flag_setting("ISO_PARANOID", "paranoid",
                   "check sequence numbers, checksums and executed pulses; stop at a violation",
                   &options::paranoid),
      flag_setting("ISO_SHUFFLE", "shuffle",
                   "poll peers in random order to expose order-dependent code", &options::shuffle),
      flag_setting("ISO_DIRECT_READS", "direct_reads",
                   "serve reads from a copy on another node of this host without the NICs",
                   &options::direct_reads),
      flag_setting("ISO_RELAXED", "relaxed",
                   "teaching only, NOT sequentially consistent: writes applied on arrival, "
                   "reads of this node's copies served at once",
                   &options::relaxed),
      number_setting("ISO_WINDOW_BYTES", "window_bytes", "bytes", "0 to 68719476736 (64 GiB)",
                     "memory window per node, where its copies live while they fit",
                     &options::window_bytes, 0, kMaxWindowBytes),
      choice_setting<order_kind>(
          "ISO_ORDERING", "ordering", "sequencer or isotach",
          "how an ordered group orders its messages, unless it names an order", &options::ordering,
          {{"sequencer", order_kind::sequencer}, {"isotach", order_kind::isotach}}),
      choice_setting<order_kind>(
          "ISO_OBJECT_ORDER", "object_order", "sequencer or isotach",
          "the total order of replicated objects' writes; isotach lets them join isochrons",
          &options::object_order,
          {{"sequencer", order_kind::sequencer}, {"isotach", order_kind::isotach}}),
      {"ISO_MULTICAST_TREE", "multicast_tree", "name", "binary, chain or binomial",
       "the spanning trees NICs forward a sequenced group's messages along",
       [](options& o, const std::string& text) {
         o.multicast_tree = text;
         return absl::OkStatus();
       },
       [](const options& o) { return nicfw::parse_tree_shape(o.multicast_tree).ok(); },
       [](const options& o) { return o.multicast_tree; }},
  };
  return table;
}

}  // namespace

absl::StatusOr<options> apply_environment(const options& requested) {
  options out = requested;
#ifdef ISO_SHUFFLE_DEFAULT
  out.shuffle = true;
#endif
  std::vector<bool> from_environment;
  for (const setting& s : settings()) {
    const char* text = std::getenv(s.name);
    from_environment.push_back(text != nullptr);
    if (text == nullptr) continue;
    if (absl::Status parsed = s.parse(out, text); !parsed.ok()) return parsed;
  }
  // Every value is checked, whether the environment or the program set it.
  for (std::size_t i = 0; i < settings().size(); ++i) {
    const setting& s = settings()[i];
    if (s.valid(out)) continue;
    const std::string detail = absl::StrFormat("valid values: %s", s.range);
    if (from_environment[i]) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s is '%s'; %s", s.name, std::getenv(s.name), detail));
    }
    return absl::InvalidArgumentError(
        absl::StrFormat("options.%s is %s; %s", s.field, s.print(out), detail));
  }
  return out;
}

absl::StatusOr<test_settings> read_test_settings() {
  test_settings out;
  if (const char* netns = std::getenv("ISO_TEST_NETNS"); netns != nullptr) {
    if (std::string_view(netns).find('/') != std::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrFormat("ISO_TEST_NETNS is '%s'; a namespace name prefix has no '/'", netns));
    }
    out.netns_prefix = netns;
  }
  if (const char* per_host = std::getenv("ISO_TEST_NODES_PER_HOST"); per_host != nullptr) {
    if (!absl::SimpleAtoi(per_host, &out.nodes_per_host) || out.nodes_per_host < 1 ||
        out.nodes_per_host > 4096) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "ISO_TEST_NODES_PER_HOST is '%s'; nodes per emulated host are 1 to 4096", per_host));
    }
  }
  const char* fault = std::getenv(kTestFaultVariable);
  if (fault == nullptr || *fault == '\0') return out;
  if (absl::StatusOr<comm::fault_plan> plan = comm::parse_fault_plan(fault); !plan.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s is '%s'; %s", kTestFaultVariable, fault, plan.status().message()));
  }
  out.fault = fault;
  return out;
}

std::vector<config_row> describe(const options& opts) {
  std::vector<config_row> rows;
  for (const setting& s : settings()) {
    rows.push_back({s.name, s.unit, s.range, s.help, s.print(opts)});
  }
  // Read by the launch (runtime/bootstrap/launch_environment.hpp), not an options field.
  const char* transport = std::getenv("ISO_TRANSPORT");
  rows.push_back({"ISO_TRANSPORT", "name", "shm, inproc or ucx",
                  "where the nodes run: shm or inproc (set by isorun), ucx (processes a PMIx "
                  "launcher starts; automatic under one); node.status() shows the lanes",
                  transport != nullptr ? transport : "automatic"});
  const char* fault = std::getenv(kTestFaultVariable);
  rows.push_back({kTestFaultVariable, "plan", "reorder|corrupt:DEST:N[:MINBYTES], or empty",
                  "test only: break this node's transport once", fault ? fault : ""});
  return rows;
}

}  // namespace iso::runtime

namespace iso {

std::vector<option_description> describe_options(const options& requested) {
  absl::StatusOr<options> effective = runtime::apply_environment(requested);
  std::vector<option_description> out;
  for (const runtime::config_row& row :
       runtime::describe(effective.ok() ? *effective : requested)) {
    out.push_back({row.name, row.unit, row.help, row.value, row.range});
  }
  if (!effective.ok()) {
    out.push_back({"(error)", "", std::string(effective.status().message()), "", ""});
  }
  if (absl::StatusOr<runtime::test_settings> test = runtime::read_test_settings(); !test.ok()) {
    out.push_back({"(error)", "", std::string(test.status().message()), "", ""});
  }
  return out;
}

}  // namespace iso
