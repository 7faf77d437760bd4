#include "runtime/collective_digest.hpp"

namespace iso::runtime {

std::uint64_t job_agreement_digest(const nicfw::topology& topo, const iso::options& opts) {
  collective_digest d(collective_digest::kind::barrier);
  d.add(topo.nodes()).add(topo.tokens_per_loop()).add(topo.switches().size());
  for (const nicfw::switch_info& sw : topo.switches()) d.add(sw.neighbours).add(sw.tm_host);
  for (std::uint32_t n = 0; n < topo.nodes(); ++n) d.add(topo.switch_of(n));
  d.add(opts.page_variables).add(opts.credit_window).add(opts.paranoid ? 1 : 0);
  d.add(opts.relaxed ? 1 : 0);
  return d.value();
}

}  // namespace iso::runtime
