// A job in which one node misbehaves the way real programs do by mistake; run through isorun
// by the tests beside it, which expect the job to fail fast with a message naming the node
// and what went wrong (never to hang, never to go on with wrong values).
//
//   misbehaving-node MODE
//     uneven-allocation  node 1 allocates a different number of variables than the others
//     own-placement      every node places its allocation on itself
//     exit-early         node 1 ends its process (status 0) before the job's end
//     exit-holding-sched node 1 schedules a variable, then ends; node 0 reads it
//     stop               node 1 stops itself (SIGSTOP); the others wait for it in a barrier
//     exit-while-polled  node 1 ends its process (status 0) while the others only poll
//     agree              every node does the same (the control: must succeed)
#include <signal.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "iso/iso.hpp"

namespace {

std::int64_t read_alone(iso::node& node, iso::shared_var<std::int64_t> v) {
  iso::value<std::int64_t> value;
  {
    iso::isochron iso(node);
    value = iso.read(v);
  }
  return value.get();
}

void run_mode(iso::node& node, std::string_view mode) {
  if (mode == "uneven-allocation") {
    auto vars = node.allocate<std::int64_t>(node.id() == 1 ? 2048 : 512, iso::placement::on(0));
    auto next = node.allocate<std::int64_t>(1, iso::placement::on(0));
    std::printf("node %u: allocations at %llu and %llu\n", node.id(),
                static_cast<unsigned long long>(vars[0].where()),
                static_cast<unsigned long long>(next[0].where()));
  } else if (mode == "own-placement") {
    (void)node.allocate<std::int64_t>(16, iso::placement::on(node.id()));
  } else if (mode == "exit-early") {
    if (node.id() == 1) std::_Exit(0);
    node.barrier();
  } else if (mode == "exit-holding-sched") {
    auto vars = node.allocate<std::int64_t>(2, iso::placement::on(0));
    const iso::shared_var<std::int64_t> x = vars[0];
    const iso::shared_var<std::int64_t> scheduled = vars[1];
    if (node.id() == 1) {
      {
        iso::isochron iso(node);
        iso.sched(x);
        iso.write(scheduled, 1);
      }
      node.quiet();  // the sched has executed on node 0 before this process ends
      std::_Exit(0);
    }
    if (node.id() == 0) {
      while (read_alone(node, scheduled) == 0) {
      }
      // x waits for node 1's assign, which will never come.
      std::printf("node 0: read %lld\n", static_cast<long long>(read_alone(node, x)));
    }
    node.barrier();
  } else if (mode == "exit-while-polled") {
    node.barrier();  // every node is past its start
    if (node.id() == 1) std::_Exit(0);
    for (;;) node.poll();  // waits on nobody: only its looks at the job can end it
  } else if (mode == "stop") {
    if (node.id() == 1) ::raise(SIGSTOP);
    node.barrier();
  } else if (mode == "agree") {
    (void)node.allocate<std::int64_t>(512, iso::placement::on(0));
    (void)node.allocate<std::int64_t>(16, iso::placement::everywhere());
    node.barrier();
  } else {
    std::fprintf(stderr, "misbehaving-node: unknown mode '%.*s'\n", static_cast<int>(mode.size()),
                 mode.data());
    std::exit(2);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: misbehaving-node MODE\n");
    return 2;
  }
  const std::string_view mode = argv[1];
  return iso::run(argc, argv, [&](iso::node& node) {
    run_mode(node, mode);
    std::printf("node %u: %.*s done\n", node.id(), static_cast<int>(mode.size()), mode.data());
  });
}
