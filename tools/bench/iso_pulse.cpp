// iso-pulse: how fast logical time moves, after the Regehr report's Table 4.2 (pulse
// interval), on 2 nodes. The public API does not expose pulses, so under load they are read
// from the trace (options::trace): each executed operation carries the pulse it ran in.
//
// Under load: node 0 issues a stream of N isochrons, each one write of a variable whose only
// copy is on node 1, calling node.poll() once after each (the progress an application owes
// an inline NIC; with a NIC thread it only executes what is due). Two loads:
//   one sender: node 1 only serves (polls) meanwhile.
//   both send:  node 1 streams N such isochrons to a variable on node 0 at the same time.
// The window is the wall time from before the first issue to after node.quiesce() at the
// sender (for both send: the longer of the two senders' windows). Figures:
//   us per pulse:         window / (last pulse - first pulse), the pulses being those that
//                         the stream's writes executed in at their destination.
//   isochrons per pulse:  isochrons executed / (last pulse - first pulse + 1): how many
//                         isochrons one pulse carries on average, empty pulses included.
//   us per isochron:      window / isochrons: the stream's throughput.
//   pulses passed:        last pulse - first pulse. When it is 0 (the whole stream ran in
//                         one pulse) that repetition has no us-per-pulse figure.
// Idle: logical time here is lazy (it stands still while nobody needs it), so an idle pulse
// interval is not a rate. Instead, the time for logical time to advance on demand: from
// issuing one remote-write isochron on an otherwise idle job until node.quiesce() returns
// (node 0 has run the isochron's marker, so its pulse has closed there), median of M per
// repetition.
//   hot:  node 1 serves by polling and node 0 issues back to back.
//   cold: node 1 waits in node.barrier() and node 0 sleeps 2 ms before each isochron, so
//         every party (NIC threads, node 1's host) has gone to sleep: the wake-up path.
// There is no OpenSHMEM counterpart: the peer column shows "-".
//
//   build/bin/iso-pulse                   # drives: isorun -n 2
//   build/bin/iso-pulse --quick           # shorter streams, fewer repetitions (for tests)
//   build/bin/iso-pulse --nic thread      # the NIC mode (thread|inline|auto; default auto)
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "iso/iso.hpp"
#include "tools/bench/iso_bench_common.hpp"

namespace {

using iso::bench::serve_until;
using iso::bench::set_done;

using clock_type = std::chrono::steady_clock;

double micros(clock_type::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

struct sizes {
  int repetitions;
  int stream;   // N: isochrons per sender and load figure
  int demands;  // M: single isochrons per idle figure (hot)
  int cold;     // single isochrons per idle figure (cold)
};

// What one node saw of a stream: the pulses its writes executed in, and the sender's window.
struct stream_stats {
  double window_us = 0;
  std::uint64_t first_pulse = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t last_pulse = 0;
  std::uint64_t events = 0;
};

// Scans this node's trace from `from` for writes by `pid` to `target`.
void scan_trace(const iso::node& node, std::size_t from, iso::node_id pid, iso::address target,
                stream_stats& out) {
  const std::vector<iso::trace_event>& trace = node.trace();
  for (std::size_t i = from; i < trace.size(); ++i) {
    const iso::trace_event& e = trace[i];
    if (e.op != iso::trace_op::write || e.pid != pid || e.address != target) continue;
    out.first_pulse = std::min(out.first_pulse, e.pulse);
    out.last_pulse = std::max(out.last_pulse, e.pulse);
    ++out.events;
  }
}

// Issues `count` single-write isochrons to `target`, polling once after each; returns the
// window up to quiesce().
double stream(iso::node& node, iso::shared_var<std::int64_t> target, int count) {
  const auto start = clock_type::now();
  for (int i = 0; i < count; ++i) {
    iso::isochron iso(node);
    iso.write(target, std::int64_t{i});
    iso.end();
    node.poll();
  }
  node.quiesce();
  return micros(clock_type::now() - start);
}

void send_stats(iso::node& node, const stream_stats& s) {
  node.send(0, std::as_bytes(std::span(&s, 1)));
}

stream_stats receive_stats(iso::node& node) {
  iso::message m = node.receive();
  stream_stats s;
  if (m.bytes().size() != sizeof(s)) {
    throw iso::error(iso::error_code::data_loss, "iso-pulse: malformed statistics message");
  }
  std::memcpy(&s, m.bytes().data(), sizeof(s));
  return s;
}

// Prints the load figures of `isochrons` isochrons seen over [first, last] in `window_us`.
void print_load(const char* name, double window_us, std::uint64_t first, std::uint64_t last,
                std::uint64_t isochrons, std::uint64_t expected) {
  if (isochrons != expected) {
    throw iso::error(
        iso::error_code::data_loss,
        absl::StrFormat("iso-pulse: %s: %d writes executed, %d issued", name, isochrons, expected));
  }
  // No pulse passed at all (the whole stream in one pulse): the interval is longer than the
  // window, which is no figure; the pulses row shows it.
  if (last > first) {
    std::printf("%s_pulse_us %.4f\n", name, window_us / static_cast<double>(last - first));
  }
  std::printf("%s_pulses %llu\n", name, static_cast<unsigned long long>(last - first));
  std::printf("%s_iso_per_pulse %.4f\n%s_iso_us %.4f\n", name,
              static_cast<double>(isochrons) / static_cast<double>(last - first + 1), name,
              window_us / static_cast<double>(isochrons));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void worker(iso::node& node, const sizes& z) {
  if (node.count() != 2) throw iso::error(iso::error_code::invalid_argument, "needs 2 nodes");
  const iso::node_id me = node.id();
  // One variable per node and phase, so that each phase's writes are told apart in the trace.
  auto one_on_1 = node.allocate<std::int64_t>(1, iso::placement::on(1))[0];
  auto both_on_1 = node.allocate<std::int64_t>(1, iso::placement::on(1))[0];
  auto both_on_0 = node.allocate<std::int64_t>(1, iso::placement::on(0))[0];
  auto demand_on_1 = node.allocate<std::int64_t>(1, iso::placement::on(1))[0];
  auto done = node.allocate<std::int64_t>(1, iso::placement::on(1))[0];
  std::int64_t phase = 0;

  for (int rep = 0; rep < z.repetitions; ++rep) {
    // Each phase starts with a barrier, and the trace is marked before it: a node can still
    // be inside barrier() (executing what arrives) after the other has left and started
    // sending, so the first writes of a stream may execute before barrier() returns.
    // Every earlier write of the phase's variable executed before the previous barrier
    // returned, so what follows the mark is this phase's stream alone.

    // One sender.
    std::size_t mark = node.trace().size();
    node.barrier();
    ++phase;
    if (me == 0) {
      stream_stats s;
      s.window_us = stream(node, one_on_1, z.stream);
      set_done(node, done, phase);
      node.barrier();
      const stream_stats seen = receive_stats(node);
      print_load("one", s.window_us, seen.first_pulse, seen.last_pulse, seen.events,
                 static_cast<std::uint64_t>(z.stream));
    } else {
      serve_until(node, done, phase);
      node.barrier();
      stream_stats seen;
      scan_trace(node, mark, 0, one_on_1.where(), seen);
      send_stats(node, seen);
    }

    // Both send. Node 0 starts when node 1 says it starts: with a NIC thread, node 1's
    // barrier() can take as long as a stream of node 0's to return (it waits for a moment
    // with nothing delivered), so starting both on the barrier would run the streams one
    // after the other.
    mark = node.trace().size();
    node.barrier();
    stream_stats mine;
    if (me == 1) {
      const std::byte go{1};
      node.send(0, std::span(&go, 1));
    } else {
      (void)node.receive();
    }
    mine.window_us = stream(node, me == 0 ? both_on_1 : both_on_0, z.stream);
    node.barrier();
    scan_trace(node, mark, 1 - me, me == 0 ? both_on_0.where() : both_on_1.where(), mine);
    if (me == 1) {
      send_stats(node, mine);
    } else {
      const stream_stats other = receive_stats(node);
      print_load("both", std::max(mine.window_us, other.window_us),
                 std::min(mine.first_pulse, other.first_pulse),
                 std::max(mine.last_pulse, other.last_pulse), mine.events + other.events,
                 2 * static_cast<std::uint64_t>(z.stream));
    }

    // Idle, hot: node 1 polls.
    node.barrier();
    ++phase;
    if (me == 0) {
      std::vector<double> samples;
      for (int i = 0; i < z.demands; ++i) {
        const auto t0 = clock_type::now();
        set_done(node, demand_on_1, i);
        node.quiesce();
        samples.push_back(micros(clock_type::now() - t0));
      }
      set_done(node, done, phase);
      std::printf("demand_hot_us %.4f\n", median(samples));
    } else {
      serve_until(node, done, phase);
    }

    // Idle, cold: node 1 sleeps in barrier() while node 0 lets everything go idle first.
    node.barrier();
    if (me == 0) {
      std::vector<double> samples;
      for (int i = 0; i < z.cold; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        const auto t0 = clock_type::now();
        set_done(node, demand_on_1, i);
        node.quiesce();
        samples.push_back(micros(clock_type::now() - t0));
      }
      std::printf("demand_cold_us %.4f\n", median(samples));
    }
    node.barrier();
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<iso::bench::bench_args> parsed =
      iso::bench::parse_bench_args(argc, argv, "iso-pulse", false);
  if (!parsed) return 2;
  const iso::bench::bench_args& cfg = *parsed;
  iso::options opts;
  opts.nic = cfg.mode;
  const sizes z = cfg.quick
                      ? sizes{.repetitions = 2, .stream = 2000, .demands = 200, .cold = 50}
                      : sizes{.repetitions = 5, .stream = 20000, .demands = 2000, .cold = 200};
  if (cfg.as_worker) {
    // The trace holds every executed operation: bounded by the stream lengths above.
    opts.trace = true;
    return iso::run(argc, argv, opts, [&](iso::node& node) { worker(node, z); });
  }

  const std::string bin = iso::bench::program_directory();
  const std::string self = bin + "/iso-pulse";
  const std::string nic = cfg.nic.empty() ? "auto" : cfg.nic;
  const std::string flags = absl::StrFormat("%s --nic %s", cfg.quick ? " --quick" : "", nic);
  const int rounds = cfg.quick ? 1 : 3;
  std::printf(
      "iso-pulse: logical time under load and on demand, 2 processes (shm), nic %s,\n"
      "streams of %d single-write isochrons, %d rounds x %d repetitions\n",
      nic.c_str(), z.stream, rounds, z.repetitions);
  std::fflush(stdout);
  iso::bench::sample_table ours;
  for (int round = 0; round < rounds; ++round) {
    if (!iso::bench::collect(
            absl::StrFormat("'%s/isorun' -n 2 -- '%s' --worker%s", bin, self, flags), ours)) {
      std::fprintf(stderr, "iso-pulse: our measurement failed\n");
      return 1;
    }
  }
  using iso::bench::summarize;
  std::printf("\nmedian [min-max] over repetitions\n");
  iso::bench::print_header("iso", "-");
  for (const char* load : {"one", "both"}) {
    const std::string name = std::string(load) == "one" ? "load, one sender" : "load, both send";
    iso::bench::print_row(name + ": us per pulse", summarize(ours[std::string(load) + "_pulse_us"]),
                          std::nullopt);
    iso::bench::print_row(name + ": isochrons/pulse",
                          summarize(ours[std::string(load) + "_iso_per_pulse"]), std::nullopt);
    iso::bench::print_row(name + ": us per isochron",
                          summarize(ours[std::string(load) + "_iso_us"]), std::nullopt);
    // A count: print_row's three decimals would suggest a precision it does not have.
    std::printf("%-34s %-26s %-26s %s\n", (name + ": pulses passed").c_str(),
                iso::bench::cell(summarize(ours[std::string(load) + "_pulses"]), "%.0f").c_str(),
                "-", "-");
  }
  iso::bench::print_row("idle, on demand (hot): us", summarize(ours["demand_hot_us"]),
                        std::nullopt);
  iso::bench::print_row("idle, on demand (cold): us", summarize(ours["demand_cold_us"]),
                        std::nullopt);
  return 0;
}
