#include "tools/trace_view/isochron_order.hpp"

#include <algorithm>
#include <tuple>

namespace iso::trace_view {

std::vector<drawn_isochron> isochrons_in_order(const history_view& h) {
  using key = std::tuple<std::uint64_t, bool, std::uint64_t, std::uint32_t, std::uint64_t, bool>;
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::pair<key, drawn_isochron>> found;
  for (const iso::trace_event& e : h.events) {
    if (e.op == iso::trace_op::message) continue;
    const key k{e.pulse, e.after_pulse, e.step, e.pid, e.rank, !e.direct};
    auto [it, fresh] = found.try_emplace({e.issuer, e.issue_rank});
    auto& [best, iso] = it->second;
    if (fresh || k < best) {
      best = k;
      iso.pulse = e.pulse;
      iso.after_pulse = e.after_pulse;
    }
    iso.issuer = e.issuer;
    iso.issue_rank = e.issue_rank;
    iso.at_node[e.node].push_back(&e);
  }
  std::vector<std::pair<key, drawn_isochron>> sorted;
  sorted.reserve(found.size());
  for (auto& [id, entry] : found) sorted.push_back(std::move(entry));
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<drawn_isochron> out;
  out.reserve(sorted.size());
  for (auto& [k, iso] : sorted) out.push_back(std::move(iso));
  return out;
}

}  // namespace iso::trace_view
