#include "runtime/config.hpp"

#include <bit>
#include <cstdlib>
#include <functional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "comm/fault_injection.hpp"
#include "comm/inproc.hpp"

namespace iso::runtime {
namespace {

struct setting {
  const char* name;
  const char* unit;
  const char* help;
  std::function<absl::Status(options&, const std::string&)> parse;
  std::function<std::string(const options&)> print;
};

absl::Status parse_milliseconds(const char* name, const std::string& text,
                                std::chrono::milliseconds& out) {
  std::int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value <= 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s is '%s', not a positive number of milliseconds", name, text));
  }
  out = std::chrono::milliseconds(value);
  return absl::OkStatus();
}

absl::Status parse_bytes(const char* name, const std::string& text, std::uint64_t& out) {
  if (!absl::SimpleAtoi(text, &out)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s is '%s', not a number of bytes", name, text));
  }
  return absl::OkStatus();
}

// An on/off setting, written 0 or 1, held in `member`.
setting flag_setting(const char* name, const char* help, bool options::*member) {
  return {name, "0|1", help,
          [name, member](options& o, const std::string& text) {
            if (text != "0" && text != "1") {
              return absl::InvalidArgumentError(
                  absl::StrFormat("%s is '%s'; expected 0 or 1", name, text));
            }
            o.*member = text == "1";
            return absl::OkStatus();
          },
          [member](const options& o) { return std::string(o.*member ? "1" : "0"); }};
}

const std::vector<setting>& settings() {
  static const std::vector<setting> table = {
      {"ISO_RING_CAPACITY", "bytes",
       "buffer per ordered pair of nodes (power of two); a message may use a quarter of it",
       [](options& o, const std::string& text) {
         std::uint64_t value = 0;
         if (absl::Status s = parse_bytes("ISO_RING_CAPACITY", text, value); !s.ok()) return s;
         if (absl::Status s = comm::validate_ring_capacity(value); !s.ok()) {
           return absl::InvalidArgumentError(absl::StrFormat("ISO_RING_CAPACITY: %s", s.message()));
         }
         o.ring_capacity = value;
         return absl::OkStatus();
       },
       [](const options& o) { return absl::StrFormat("%u", o.ring_capacity); }},
      {"ISO_JOIN_TIMEOUT_MS", "ms", "how long start-up waits for every node of the job",
       [](options& o, const std::string& text) {
         return parse_milliseconds("ISO_JOIN_TIMEOUT_MS", text, o.join_timeout);
       },
       [](const options& o) { return absl::StrFormat("%d", o.join_timeout.count()); }},
      {"ISO_BARRIER_TIMEOUT_MS", "ms", "how long a barrier waits before the job fails",
       [](options& o, const std::string& text) {
         return parse_milliseconds("ISO_BARRIER_TIMEOUT_MS", text, o.barrier_timeout);
       },
       [](const options& o) { return absl::StrFormat("%d", o.barrier_timeout.count()); }},
      {"ISO_NIC", "auto|thread|inline",
       "where the emulated NIC runs: its own thread, or inline in the application's polls",
       [](options& o, const std::string& text) {
         if (text == "auto") {
           o.nic = nic_placement::automatic;
         } else if (text == "thread") {
           o.nic = nic_placement::thread;
         } else if (text == "inline") {
           o.nic = nic_placement::inline_poll;
         } else {
           return absl::InvalidArgumentError(
               absl::StrFormat("ISO_NIC is '%s'; expected auto, thread or inline", text));
         }
         return absl::OkStatus();
       },
       [](const options& o) {
         switch (o.nic) {
           case nic_placement::thread:
             return std::string("thread");
           case nic_placement::inline_poll:
             return std::string("inline");
           case nic_placement::automatic:
             break;
         }
         return std::string("auto");
       }},
      {"ISO_TOPOLOGY", "path", "the logical topology file (protobuf text); empty: one switch",
       [](options& o, const std::string& text) {
         o.topology_file = text;
         return absl::OkStatus();
       },
       [](const options& o) { return o.topology_file; }},
      flag_setting("ISO_TRACE", "record every executed operation (node::trace)", &options::trace),
      {"ISO_CREDIT_WINDOW", "bytes",
       "flow control: bytes of one class a node may have in flight to another",
       [](options& o, const std::string& text) {
         std::uint64_t value = 0;
         if (absl::Status s = parse_bytes("ISO_CREDIT_WINDOW", text, value); !s.ok()) return s;
         o.credit_window = value;
         return absl::OkStatus();
       },
       [](const options& o) { return absl::StrFormat("%u", o.credit_window); }},
      flag_setting("ISO_PARANOID",
                   "check sequence numbers, checksums and executed pulses; stop at a violation",
                   &options::paranoid),
      {"ISO_TEST_FAULT", "plan",
       "test only: break this node's transport once (reorder|corrupt:DEST:N[:MINBYTES])",
       [](options& o, const std::string& text) {
         if (absl::StatusOr<comm::fault_plan> plan = comm::parse_fault_plan(text); !plan.ok()) {
           return absl::InvalidArgumentError(
               absl::StrFormat("ISO_TEST_FAULT: %s", plan.status().message()));
         }
         o.test_fault = text;
         return absl::OkStatus();
       },
       [](const options& o) { return o.test_fault; }},
      flag_setting("ISO_SHUFFLE", "poll peers in random order to expose order-dependent code",
                   &options::shuffle),
      flag_setting("ISO_DIRECT_READS",
                   "serve reads from a copy on another node of this host without the NICs",
                   &options::direct_reads),
      {"ISO_WINDOW_BYTES", "bytes", "memory window per node, where its copies live while they fit",
       [](options& o, const std::string& text) {
         std::uint64_t value = 0;
         if (absl::Status s = parse_bytes("ISO_WINDOW_BYTES", text, value); !s.ok()) return s;
         if (value > (std::uint64_t{1} << 36)) {
           return absl::InvalidArgumentError(
               absl::StrFormat("ISO_WINDOW_BYTES is %u; the largest is 64 GiB", value));
         }
         o.window_bytes = value;
         return absl::OkStatus();
       },
       [](const options& o) { return absl::StrFormat("%u", o.window_bytes); }},
  };
  return table;
}

}  // namespace

absl::StatusOr<options> apply_environment(const options& requested) {
  options out = requested;
#ifdef ISO_SHUFFLE_DEFAULT
  out.shuffle = true;
#endif
  for (const setting& s : settings()) {
    if (const char* text = std::getenv(s.name)) {
      if (absl::Status parsed = s.parse(out, text); !parsed.ok()) return parsed;
    }
  }
  if (!std::has_single_bit(out.page_variables) || out.page_variables > (1u << 20)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("options.page_variables is %u; it must be a power of two from 1 to 1048576",
                        out.page_variables));
  }
  if (out.credit_window < 4096 || out.credit_window > (std::size_t{1} << 30)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "options.credit_window is %u; it must be from 4096 bytes to 1 GiB", out.credit_window));
  }
  if (!out.test_fault.empty()) {
    if (absl::StatusOr<comm::fault_plan> plan = comm::parse_fault_plan(out.test_fault);
        !plan.ok()) {
      return plan.status();
    }
  }
  if (absl::Status s = comm::validate_ring_capacity(out.ring_capacity); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat("options.ring_capacity: %s", s.message()));
  }
  return out;
}

std::vector<config_row> describe(const options& opts) {
  std::vector<config_row> rows;
  for (const setting& s : settings()) rows.push_back({s.name, s.unit, s.help, s.print(opts)});
  return rows;
}

}  // namespace iso::runtime

namespace iso {

std::vector<option_description> describe_options(const options& requested) {
  absl::StatusOr<options> effective = runtime::apply_environment(requested);
  std::vector<option_description> out;
  for (const runtime::config_row& row :
       runtime::describe(effective.ok() ? *effective : requested)) {
    out.push_back({row.name, row.unit, row.help, row.value});
  }
  if (!effective.ok()) {
    out.push_back({"(error)", "", std::string(effective.status().message()), ""});
  }
  return out;
}

}  // namespace iso
