// Prints, from every node, where its job runs as node.status() says: the fabric, the
// transport and its lanes, where its thread is bound, and the processors the kernel lets
// that thread use ("node 0: fabric ucx, transport ..., lanes cma,self,sysv, binding core 0
// (cpus 0), cpus 0"); then, once the job is over, the processors that thread may use then
// ("after the job: cpus 0,1").
#include <sched.h>

#include <cstdio>
#include <string>

#include "iso/iso.hpp"

namespace {

// The calling thread's affinity as a list of processor numbers, "0,1".
std::string affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return "?";
  std::string list;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    if (!list.empty()) list += ',';
    list += std::to_string(cpu);
  }
  return list;
}

}  // namespace

int main(int argc, char** argv) {
  const int status = iso::run(argc, argv, [](iso::node& node) {
    const iso::node_status s = node.status();
    std::printf("node %u: fabric %s, transport %s, lanes %s, binding %s, cpus %s, waiting %s\n",
                node.id(), s.fabric.c_str(), s.transport.c_str(), s.lanes.c_str(),
                s.binding.c_str(), affinity().c_str(), s.waiting.c_str());
    std::fflush(stdout);
  });
  std::printf("after the job: cpus %s\n", affinity().c_str());
  return status;
}
