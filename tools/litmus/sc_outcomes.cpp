#include "tools/litmus/sc_outcomes.hpp"

#include <algorithm>
#include <map>

namespace iso::litmus {
namespace {

class enumerator {
 public:
  explicit enumerator(const test& t) : test_(t), observed_(t.observed_locations()) {
    for (const std::string& loc : t.locations) memory_[loc] = t.initial_value(loc);
    next_.assign(t.processes.size(), 0);
    current_.registers.resize(t.processes.size());
    for (std::size_t p = 0; p < t.processes.size(); ++p) {
      current_.registers[p].assign(t.processes[p].registers.size(), 0);
    }
  }

  std::set<outcome> run() {
    step();
    return std::move(found_);
  }

 private:
  void step() {
    bool any = false;
    for (std::size_t p = 0; p < test_.processes.size(); ++p) {
      const auto& isochrons = test_.processes[p].isochrons;
      if (next_[p] == isochrons.size()) continue;
      any = true;
      const auto saved_memory = memory_;
      const auto saved_registers = current_.registers[p];
      execute(p, isochrons[next_[p]]);
      ++next_[p];
      step();
      --next_[p];
      memory_ = saved_memory;
      current_.registers[p] = saved_registers;
    }
    if (!any) {
      outcome o = current_;
      for (const std::string& loc : observed_) o.finals.push_back(memory_[loc]);
      found_.insert(std::move(o));
    }
  }

  void execute(std::size_t p, const isochron_spec& iso) {
    const auto& regs = test_.processes[p].registers;
    for (const access& a : iso) {
      if (a.write) {
        memory_[a.location] = a.value;
      } else {
        const auto at = std::find(regs.begin(), regs.end(), a.reg) - regs.begin();
        current_.registers[p][static_cast<std::size_t>(at)] = memory_[a.location];
      }
    }
  }

  const test& test_;
  std::vector<std::string> observed_;
  std::map<std::string, std::int64_t> memory_;
  std::vector<std::size_t> next_;
  outcome current_;
  std::set<outcome> found_;
};

}  // namespace

std::string format_outcome(const test& t, const outcome& o) {
  std::string out;
  auto add = [&](const std::string& term) {
    if (!out.empty()) out += ' ';
    out += term;
  };
  for (std::size_t p = 0; p < o.registers.size(); ++p) {
    for (std::size_t r = 0; r < o.registers[p].size(); ++r) {
      add(std::to_string(p) + ":" + t.processes[p].registers[r] + "=" +
          std::to_string(o.registers[p][r]));
    }
  }
  const auto observed = t.observed_locations();
  for (std::size_t i = 0; i < o.finals.size(); ++i) {
    add(observed[i] + "=" + std::to_string(o.finals[i]));
  }
  return out;
}

bool satisfies(const test& t, const outcome& o) {
  const auto observed = t.observed_locations();
  for (const term& c : t.exists) {
    std::int64_t actual = 0;
    if (c.process) {
      const auto& regs = t.processes[*c.process].registers;
      const auto at = std::find(regs.begin(), regs.end(), c.name) - regs.begin();
      actual = o.registers[*c.process][static_cast<std::size_t>(at)];
    } else {
      const auto at = std::find(observed.begin(), observed.end(), c.name) - observed.begin();
      actual = o.finals[static_cast<std::size_t>(at)];
    }
    if (actual != c.value) return false;
  }
  return true;
}

std::set<outcome> sc_outcomes(const test& t) { return enumerator(t).run(); }

}  // namespace iso::litmus
