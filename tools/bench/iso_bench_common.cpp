#include "tools/bench/iso_bench_common.hpp"

#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <thread>

#include "absl/strings/str_format.h"

namespace iso::bench {

std::optional<bench_args> parse_bench_args(int argc, char** argv, const char* name,
                                           bool takes_nodes) {
  bench_args args;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      args.quick = true;
    } else if (std::strcmp(argv[i], "--worker") == 0) {
      args.as_worker = true;
    } else if (std::strcmp(argv[i], "--nodes") == 0 && i + 1 < argc) {
      if (!takes_nodes) {
        std::fprintf(stderr, "%s: measures exactly 2 nodes; --nodes is for iso-lat\n", name);
        return std::nullopt;
      }
      // Digits only, and no overflow: strtol would take " 3" and clamp a huge number.
      const char* const text = argv[++i];
      const char* const end = text + std::strlen(text);
      int nodes = 0;
      const auto [ptr, ec] = std::from_chars(text, end, nodes);
      if (ec != std::errc() || ptr != end || nodes < 2 || nodes > 64) {
        std::fprintf(stderr, "%s: --nodes takes a count from 2 to 64, not '%s'\n", name, argv[i]);
        return std::nullopt;
      }
      args.nodes = nodes;
    } else if (std::strcmp(argv[i], "--nic") == 0 && i + 1 < argc) {
      args.nic = argv[++i];
      if (args.nic == "thread") {
        args.mode = iso::nic_mode::thread;
      } else if (args.nic == "inline") {
        args.mode = iso::nic_mode::inline_poll;
      } else if (args.nic != "auto") {
        std::fprintf(stderr, "%s: --nic takes thread, inline or auto, not '%s'\n", name,
                     args.nic.c_str());
        return std::nullopt;
      }
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--nic thread|inline|auto] [--nodes N]\n", name);
      return std::nullopt;
    }
  }
  return args;
}

void serve_until(iso::node& node, iso::shared_var<std::int64_t> done, std::int64_t value) {
  for (;;) {
    for (int i = 0; i < 1000; ++i) node.poll();
    // With more processes than cores (the demo runs 4 on 2), a server that only spins
    // takes the measuring node's core for whole time slices.
    std::this_thread::yield();
    iso::isochron iso(node);
    auto flag = iso.read(done);  // a purely local isochron: the copy is here
    iso.end();
    if (flag.get() >= value) return;
  }
}

void set_done(iso::node& node, iso::shared_var<std::int64_t> done, std::int64_t value) {
  iso::isochron iso(node);
  iso.write(done, value);
  iso.end();
}

bool shmem_peer_built(const std::string& bin) {
  return std::system(absl::StrFormat("test -x '%s/iso-shmem-peer'", bin).c_str()) == 0;
}

void collect_shmem_peer(const std::string& bin, bool quick, sample_table& peer, int pes) {
  // The peer takes --quick and --pes only (the NIC mode is ours).
  collect(absl::StrFormat("'%s/run_shmem_peer.sh' '%s/iso-shmem-peer'%s --pes %d 2>/dev/null", bin,
                          bin, quick ? " --quick" : "", pes),
          peer, /*tolerate_exit=*/true);
}

void collect_shmem_peer_sizes(const std::string& bin, bool quick, sample_table& peer) {
  collect_indexed(absl::StrFormat("'%s/run_shmem_peer.sh' '%s/iso-shmem-peer'%s --sizes "
                                  "2>/dev/null",
                                  bin, bin, quick ? " --quick" : ""),
                  {"shmem_getmem_us", "shmem_putmem_quiet_us"}, peer, /*tolerate_exit=*/true);
}

std::optional<std::string> mpi_peer_command(const std::string& bin, const char* program, int ranks,
                                            const std::string& args) {
  const std::string peer = bin + "/" + program;
  if (::access(peer.c_str(), X_OK) != 0) return std::nullopt;
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) return std::nullopt;
  if (::geteuid() == 0) {
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  }
  return absl::StrFormat(
      "mpirun -n %d --oversubscribe --mca pml ob1 --mca btl self,vader "
      "--mca btl_vader_single_copy_mechanism none '%s'%s 2>/dev/null",
      ranks, peer, args);
}

std::optional<std::string> mpi_ucx_peer_command(const std::string& bin, const char* program,
                                                int ranks, const std::string& args) {
  // Checks that the peer and mpirun exist, and allows root, as the other does.
  if (!mpi_peer_command(bin, program, ranks, args)) return std::nullopt;
  // Open MPI 4.1 takes pml ucx only where UCX finds InfiniBand-class devices unless told
  // that any transport and device will do.
  return absl::StrFormat(
      "mpirun -n %d --oversubscribe --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any"
      "%s '%s/%s'%s 2>/dev/null",
      ranks, std::getenv("UCX_TLS") != nullptr ? " -x UCX_TLS" : "", bin, program, args);
}

}  // namespace iso::bench
