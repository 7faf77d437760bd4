#include "tools/sc/replay_checker.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

namespace iso::sc {
namespace {

auto order_key(const iso::trace_event& e) {
  return std::make_tuple(e.pulse, e.after_pulse, e.step, e.pid, e.rank, !e.direct, e.op_index);
}

std::string describe(const iso::trace_event& e) {
  std::ostringstream out;
  out << "op " << static_cast<int>(e.op) << " on address " << e.address << " at (pulse " << e.pulse
      << (e.after_pulse ? "+" : "") << ", step " << e.step << ", pid " << e.pid << ", rank "
      << e.rank
      << (e.direct ? ", a same-host read by node " + std::to_string(e.issuer) : std::string())
      << ") executed on node " << e.node << " value " << e.value;
  return out.str();
}

}  // namespace

sc_report check_sequential_consistency(std::vector<iso::trace_event> events) {
  sc_report report;
  std::stable_sort(events.begin(), events.end(),
                   [](const auto& a, const auto& b) { return order_key(a) < order_key(b); });
  struct cell {
    std::uint64_t value = 0;
    std::optional<std::uint32_t> sched_by;  // latest post is a sched by this node
  };
  std::map<std::uint64_t, cell> memory;
  // Reads that returned the value a sched's assign would supply: (address, node) -> reads.
  std::map<std::pair<std::uint64_t, std::uint32_t>, std::vector<iso::trace_event>> waiting;
  std::set<std::tuple<std::uint64_t, bool, std::uint64_t, std::uint32_t, std::uint64_t,
                      std::uint32_t, std::uint64_t>>
      replayed;
  auto fail = [&](const std::string& why) {
    if (report.consistent) report.first_violation = why;
    report.consistent = false;
  };
  for (const iso::trace_event& e : events) {
    if (e.op == iso::trace_op::read) {
      ++report.reads_checked;
      cell& c = memory[e.address];
      if (c.sched_by) {
        waiting[{e.address, *c.sched_by}].push_back(e);
      } else if (e.value != c.value) {
        fail("read returned " + std::to_string(e.value) + " but the latest write stored " +
             std::to_string(c.value) + ": " + describe(e));
      }
      continue;
    }
    if (e.op == iso::trace_op::message) continue;
    const auto key =
        std::make_tuple(e.pulse, e.after_pulse, e.step, e.pid, e.rank, e.op_index, e.address);
    if (!replayed.insert(key).second) continue;  // another copy of the same change
    ++report.changes;
    cell& c = memory[e.address];
    switch (e.op) {
      case iso::trace_op::write:
        c.value = e.value;
        c.sched_by.reset();
        break;
      case iso::trace_op::sched:
        c.sched_by = e.pid;
        break;
      case iso::trace_op::assign: {
        auto it = waiting.find({e.address, e.pid});
        if (it != waiting.end()) {
          for (const iso::trace_event& r : it->second) {
            if (r.value != e.value) {
              fail("read waiting on a sched returned " + std::to_string(r.value) +
                   " but the assign supplied " + std::to_string(e.value) + ": " + describe(r));
            }
          }
          waiting.erase(it);
        }
        if (c.sched_by == e.pid) {
          c.value = e.value;
          c.sched_by.reset();
        }
        break;
      }
      default:
        break;
    }
  }
  return report;
}

}  // namespace iso::sc
