// A small iso program the launcher tests run under isorun, one behaviour per argument:
//   ok          joins, passes a barrier, prints "node <id> ok"
//   child       also runs a shell in its body that says whether it inherited the segment
//   flood       each node sends 32 messages of 3000 bytes to the next, receiving as many,
//               and writes a shared variable in 4 isochrons (pulses, tokens and credits)
//   stranger    node 1 reopens the segment through /proc and starts `launch-probe ok` on it
//               as node 0 and as node 1 of the running job, with the job's secret; prints
//               each one's exit status ("stranger 0: 1")
//   twice       calls iso::run a second time after the first returned; exits with its status
//   fail <n>    node <n> throws; the others wait in a barrier, which the failure ends. Node
//               <n> then takes its time to exit, as a node with a slow teardown would, so
//               that the bystanders exit first.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "iso/iso.hpp"

namespace {

int run_ok(int argc, char** argv, bool spawn_child) {
  return iso::run(argc, argv, [spawn_child](iso::node& node) {
    node.barrier();
    if (spawn_child) {
      std::fflush(stdout);
      // /proc/self is the shell here: is the launcher's descriptor open in it?
      (void)std::system(
          "if test -e /proc/self/fd/$ISO_SHM_FD; then echo child: inherited; "
          "else echo child: closed; fi");
    }
    std::printf("node %u ok\n", node.id());
  });
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "ok";
  if (mode == "ok" || mode == "child") return run_ok(argc, argv, mode == "child");
  if (mode == "flood") {
    return iso::run(argc, argv, [](iso::node& node) {
      const std::vector<std::byte> bytes(3000, std::byte{7});
      for (int i = 0; i < 32; ++i) {
        node.send((node.id() + 1) % node.count(), bytes);
        (void)node.receive();
      }
      iso::shared_var<std::int64_t> v = node.allocate<std::int64_t>(1, iso::placement::on(0))[0];
      for (std::int64_t i = 0; i < 4; ++i) {
        iso::isochron iso(node);
        iso.write(v, i);
      }
      node.barrier();
    });
  }
  if (mode == "stranger") {
    const std::string self = argv[0];
    return iso::run(argc, argv, [&self](iso::node& node) {
      node.barrier();
      if (node.id() == 1) {
        const std::string path = std::string("/proc/self/fd/") + std::getenv("ISO_SHM_FD");
        const int fd = ::open(path.c_str(), O_RDWR);  // inheritable, unlike the runtime's
        for (const char* rank : {"0", "1"}) {
          const std::string command = "env -u ISO_REPORT_FD ISO_RANK=" + std::string(rank) +
                                      " ISO_SHM_FD=" + std::to_string(fd) + " " + self +
                                      " ok; echo stranger " + rank + ": $?";
          std::fflush(stdout);
          (void)std::system(command.c_str());
        }
        ::close(fd);
      }
      node.barrier();
      std::printf("node %u ok\n", node.id());
    });
  }
  if (mode == "twice") {
    const int first = run_ok(argc, argv, false);
    if (first != 0) return first;
    return run_ok(argc, argv, false);
  }
  if (mode == "fail" && argc > 2) {
    const unsigned culprit = static_cast<unsigned>(std::atoi(argv[2]));
    const int status = iso::run(argc, argv, [culprit](iso::node& node) {
      if (node.id() == culprit) throw std::runtime_error("the probe fails here");
      node.barrier();
    });
    // A slow teardown, not a synchronisation: whichever node exits first, isorun must name
    // the one that failed.
    if (status != 0 && std::getenv("ISO_RANK") == std::to_string(culprit)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    return status;
  }
  std::fprintf(stderr, "launch_probe: unknown mode '%s'\n", mode.c_str());
  return 2;
}
