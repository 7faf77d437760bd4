// mbm-bench: the Ironman messaging layer's table (its latency.c, thru.c, isolatency.c and
// isothru.c), non-isotach against isotach messages between 2 processes, for 64, 128, 256,
// 512 and 1024-byte payloads:
//   latency     ping-pong: node 1 sends, node 0 answers; one-way latency is half the round
//               trip. Isotach messages are singleton isochrons (one queued message each),
//               received with iso_receive(); plain ones with send()/receive(). Every
//               received message is copied into a user buffer, as Ironman's tests did.
//   throughput  node 1 streams 4,000,000 bytes of messages to node 0, which copies each;
//               MB/s at the receiver, from the node barrier that starts the run to the
//               last copy.
// The goal Ironman set (and missed at small sizes): isotach latency at most 2x non-isotach,
// and isotach throughput at least half of non-isotach, at every size.
// Beside them, Open MPI's MPI_Send/MPI_Recv measured the same way in the same run
// (mbm-bench-mpi, built when MPI is found; without it the table says the peer is missing).
//
// With --ucx, ours runs as a ucx job that mpirun starts (the ucx fabric, over the lanes UCX
// picks: shared memory on one host, or what UCX_TLS allows) and Open MPI's peer uses UCX too
// (pml ucx), so that both go over the same lanes. With --netns (root), both run so with each
// process on an emulated host of its own (netns-job.sh: network namespaces joined by veth),
// where UCX has only TCP between them; the peer enters its host through the build's
// libiso-emulated-host-preload.so.
//
//   build/bin/mbm-bench                 # drives: isorun -n 2 and mpirun -n 2, 3 rounds x 3
//                                       # repetitions
//   build/bin/mbm-bench --quick         # fewer messages (for tests)
//   build/bin/mbm-bench --nic thread    # the NIC mode (thread|inline|auto; default auto)
//   UCX_TLS=tcp,self build/bin/mbm-bench --ucx   # both over UCX's TCP lane
//   build/bin/mbm-bench --netns         # both over TCP between emulated hosts
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "iso/iso.hpp"
#include "tools/bench/iso_bench_common.hpp"
#include "tools/bench/mbm_protocol.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

using iso::bench::mbm::kSizes;

double micros(clock_type::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

// One model of messaging: how to send one message and how to receive one (into `into`).
struct model {
  const char* name;
  void (*send)(iso::node&, iso::node_id, std::span<const std::byte>);
  std::size_t (*receive)(iso::node&, std::vector<std::byte>& into);
};

void send_plain(iso::node& node, iso::node_id to, std::span<const std::byte> bytes) {
  node.send(to, bytes);
}
std::size_t receive_plain(iso::node& node, std::vector<std::byte>& into) {
  const iso::message m = node.receive();
  std::memcpy(into.data(), m.bytes().data(), m.bytes().size());
  return m.bytes().size();
}
void send_isotach(iso::node& node, iso::node_id to, std::span<const std::byte> bytes) {
  iso::isochron iso(node);
  iso.send(to, bytes);
}
std::size_t receive_isotach(iso::node& node, std::vector<std::byte>& into) {
  const iso::notice n = node.iso_receive();
  if (n.what != iso::notice::kind::message) {
    throw iso::error(iso::error_code::internal, "mbm-bench: a notice that is not a message");
  }
  std::memcpy(into.data(), n.bytes.data(), n.bytes.size());
  return n.bytes.size();
}

constexpr model kModels[] = {{"noniso", send_plain, receive_plain},
                             {"iso", send_isotach, receive_isotach}};

// Node 1's view: one-way latency in microseconds over `round_trips` ping-pongs.
double latency(iso::node& node, const model& m, int size, int round_trips) {
  std::vector<std::byte> out(static_cast<std::size_t>(size), std::byte{0x5a});
  std::vector<std::byte> in(static_cast<std::size_t>(size));
  node.barrier();
  const auto start = clock_type::now();
  for (int i = 0; i < round_trips; ++i) {
    if (node.id() == 1) {
      m.send(node, 0, out);
      if (m.receive(node, in) != out.size()) throw iso::error(iso::error_code::data_loss, "size");
    } else {
      if (m.receive(node, in) != out.size()) throw iso::error(iso::error_code::data_loss, "size");
      m.send(node, 1, in);
    }
  }
  const auto end = clock_type::now();
  return micros(end - start) / (2.0 * round_trips);
}

// Node 0's view: MB/s of a one-way stream of `bytes` in messages of `size`.
double throughput(iso::node& node, const model& m, int size, std::size_t bytes) {
  const std::size_t count = bytes / static_cast<std::size_t>(size);
  std::vector<std::byte> buffer(static_cast<std::size_t>(size), std::byte{0x33});
  node.barrier();
  double mbps = 0;
  if (node.id() == 1) {
    for (std::size_t i = 0; i < count; ++i) m.send(node, 0, buffer);
  } else {
    // From the barrier, not from the first message: isotach messages arrive a pulse at a
    // time, so a clock started by the first could miss most of the stream.
    const auto start = clock_type::now();
    std::size_t received = 0;
    for (std::size_t i = 0; i < count; ++i) received += m.receive(node, buffer);
    const auto end = clock_type::now();
    mbps = static_cast<double>(received) / micros(end - start);
  }
  node.barrier();
  return mbps;
}

void worker(iso::node& node, const iso::bench::mbm::run_shape& shape) {
  if (node.count() != 2) throw iso::error(iso::error_code::invalid_argument, "needs 2 nodes");
  // Warm-up: page in queues and buffers along both paths, at every size.
  for (const model& m : kModels) {
    for (int size : kSizes) {
      (void)latency(node, m, size, iso::bench::mbm::warmup_round_trips(shape));
    }
  }
  for (int rep = 0; rep < shape.repetitions; ++rep) {
    for (int size : kSizes) {
      // The models alternate within a size, so drift on a noisy machine hits both alike.
      for (const model& m : kModels) {
        const double us = latency(node, m, size, shape.round_trips);
        if (node.id() == 1) std::printf("%s_lat_us %d %.4f\n", m.name, size, us);
        const double mbps = throughput(node, m, size, shape.stream_bytes);
        if (node.id() == 0) std::printf("%s_thru_mbs %d %.2f\n", m.name, size, mbps);
      }
      std::fflush(stdout);
    }
  }
  node.barrier();
}

// One table per figure: isotach, non-isotach and Open MPI at every size, with the ratios
// that matter: isotach against plain messages (Ironman's goal), and plain messages against
// Open MPI (how our messaging compares with a tuned library).
void print_table(iso::bench::sample_table& samples, const char* title, const std::string& figure) {
  using iso::bench::cell;
  using iso::bench::indexed_key;
  using iso::bench::summarize;
  auto ratio = [](const std::optional<iso::bench::summary>& a,
                  const std::optional<iso::bench::summary>& b) {
    if (!a || !b || b->median <= 0) return std::string("-");
    return absl::StrFormat("%.1fx", a->median / b->median);
  };
  std::printf("\n%s\n", title);
  std::printf("%-8s %-28s %-28s %-28s %-12s %s\n", "", "isotach", "non-isotach", "Open MPI",
              "iso/non-iso", "non-iso/MPI");
  for (int size : kSizes) {
    const auto iso = summarize(samples[indexed_key("iso_" + figure, size)]);
    const auto plain = summarize(samples[indexed_key("noniso_" + figure, size)]);
    const auto mpi = summarize(samples[indexed_key("mpi_" + figure, size)]);
    std::printf("%-8s %-28s %-28s %-28s %-12s %s\n", absl::StrFormat("%d B", size).c_str(),
                cell(iso).c_str(), cell(plain).c_str(), cell(mpi).c_str(),
                ratio(iso, plain).c_str(), ratio(plain, mpi).c_str());
  }
}

}  // namespace

// Takes `flag` out of the command line (the other options are the benchmarks' common ones);
// whether it was there.
bool take_flag(int& argc, char** argv, const char* flag) {
  bool found = false;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], flag) == 0) {
      found = true;
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  return found;
}

int main(int argc, char** argv) {
  const bool between_hosts = take_flag(argc, argv, "--netns");
  const bool over_ucx = take_flag(argc, argv, "--ucx") || between_hosts;
  const std::optional<iso::bench::bench_args> parsed =
      iso::bench::parse_bench_args(argc, argv, "mbm-bench", false);
  if (!parsed) return 2;
  const iso::bench::bench_args& cfg = *parsed;
  iso::options opts;
  opts.nic = cfg.mode;
  const iso::bench::mbm::run_shape& shape =
      cfg.quick ? iso::bench::mbm::kQuick : iso::bench::mbm::kFull;
  if (cfg.as_worker) {
    return iso::run(argc, argv, opts, [&](iso::node& node) { worker(node, shape); });
  }

  const std::string bin = iso::bench::program_directory();
  const std::string nic = cfg.nic.empty() ? "auto" : cfg.nic;
  const std::string flags = absl::StrFormat("%s --nic %s", cfg.quick ? " --quick" : "", nic);
  const std::vector<std::string> indexed = {"noniso_lat_us",   "iso_lat_us",   "mpi_lat_us",
                                            "noniso_thru_mbs", "iso_thru_mbs", "mpi_thru_mbs"};
  const int rounds = cfg.quick ? 1 : 3;
  if (over_ucx && ::geteuid() == 0) {
    // Ours runs under mpirun too, with or without the peer (which would say so itself).
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  }
  if (between_hosts && ::geteuid() != 0) {
    std::fprintf(stderr, "mbm-bench: --netns makes network namespaces, which needs root\n");
    return 2;
  }
  const std::string peer_args = cfg.quick ? " --quick" : "";
  std::optional<std::string> peer =
      over_ucx ? iso::bench::mpi_ucx_peer_command(bin, "mbm-bench-mpi", 2, peer_args)
               : iso::bench::mpi_peer_command(bin, "mbm-bench-mpi", 2, peer_args);
  if (between_hosts && peer) {
    // mpirun runs inside netns-job.sh: the peer's pml goes in the environment, which mpirun
    // reads and hands on.
    ::setenv("OMPI_MCA_pml", "ucx", 1);
    ::setenv("OMPI_MCA_pml_ucx_tls", "any", 1);
    ::setenv("OMPI_MCA_pml_ucx_devices", "any", 1);
    peer = absl::StrFormat(
        "'%s/netns-job.sh' --preload '%s/libiso-emulated-host-preload.so' 2 '%s/mbm-bench-mpi'%s "
        "2>/dev/null",
        bin, bin, bin, peer_args);
  }
  const char* const tls = std::getenv("UCX_TLS");
  const std::string lanes =
      between_hosts
          ? std::string("ucx between emulated hosts (TCP over veth); Open MPI with pml ucx")
      : over_ucx ? absl::StrFormat("ucx under mpirun, UCX_TLS %s; Open MPI with pml ucx",
                                   tls != nullptr ? tls : "unset")
                 : std::string("shm");
  std::printf(
      "mbm-bench: isotach against non-isotach messages, 2 processes (%s), nic %s, beside\n"
      "Open MPI; %d round trips per latency figure, %zu bytes per stream, %d rounds x %d "
      "repetitions\n",
      lanes.c_str(), nic.c_str(), shape.round_trips, shape.stream_bytes, rounds, shape.repetitions);
  if (!peer) std::printf("(no Open MPI peer: mpirun or mbm-bench-mpi missing; ours only)\n");
  std::fflush(stdout);
  iso::bench::sample_table samples;
  for (int round = 0; round < rounds; ++round) {
    // Under mpirun a PMIx launcher starts the nodes: the ucx fabric (named, so that anything
    // else fails loudly).
    const std::string ours =
        between_hosts
            ? absl::StrFormat("'%s/netns-job.sh' 2 '%s/mbm-bench' --worker%s", bin, bin, flags)
        : over_ucx
            ? absl::StrFormat(
                  "mpirun -n 2 --oversubscribe -x ISO_TRANSPORT=ucx%s '%s/mbm-bench' --worker%s",
                  tls != nullptr ? " -x UCX_TLS" : "", bin, flags)
            : absl::StrFormat("'%s/isorun' -n 2 -- '%s/mbm-bench' --worker%s", bin, bin, flags);
    if (!iso::bench::collect_indexed(ours, indexed, samples)) {
      std::fprintf(stderr, "mbm-bench: the measurement failed\n");
      return 1;
    }
    // Rounds of ours and the peer's alternate, so that a noisy spell hits both alike.
    if (peer && !iso::bench::collect_indexed(*peer, indexed, samples)) {
      std::printf("(the Open MPI peer failed to run; ours only)\n");
      peer.reset();
    }
  }
  print_table(samples,
              "one-way latency, microseconds: median [min-max] (goal: iso/non-iso at most 2)",
              "lat_us");
  print_table(samples,
              "streaming throughput, MB/s at the receiver (goal: iso/non-iso at least 0.5)",
              "thru_mbs");
  return 0;
}
