// Prints, from every node, where its job runs as node.status() says: the fabric, the
// transport and its lanes ("node 0: fabric ucx, transport ..., lanes cma,self,sysv").
#include <cstdio>

#include "iso/iso.hpp"

int main(int argc, char** argv) {
  return iso::run(argc, argv, [](iso::node& node) {
    const iso::node_status s = node.status();
    std::printf("node %u: fabric %s, transport %s, lanes %s\n", node.id(), s.fabric.c_str(),
                s.transport.c_str(), s.lanes.c_str());
    std::fflush(stdout);
  });
}
