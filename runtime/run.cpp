#include "iso/run.hpp"

#include <atomic>
#include <cstdio>
#include <exception>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/log.hpp"
#include "comm/shm_segment.hpp"
#include "nicfw/engine.hpp"
#include "nicfw/topology.hpp"
#include "runtime/bootstrap/launch_environment.hpp"
#include "runtime/bootstrap/segment_bootstrap.hpp"
#include "runtime/config.hpp"
#include "runtime/node_state.hpp"

namespace iso {
namespace {

comm::shm_options segment_options(const options& opts) {
  return comm::shm_options{.ring_capacity = opts.ring_capacity,
                           .join_timeout = absl::FromChrono(opts.join_timeout),
                           .shuffle_poll_order = opts.shuffle};
}

nicfw::placement nic_placement_of(const options& opts) {
  switch (opts.nic) {
    case nic_placement::thread: return nicfw::placement::thread;
    case nic_placement::inline_poll: return nicfw::placement::inline_poll;
    case nic_placement::automatic: break;
  }
  return nicfw::placement::automatic;
}

absl::StatusOr<std::shared_ptr<const nicfw::topology>> load_topology(const options& opts,
                                                                     std::uint32_t nodes) {
  if (opts.topology_file.empty()) {
    return std::make_shared<const nicfw::topology>(nicfw::topology::single_switch(nodes));
  }
  absl::StatusOr<nicfw::topology> topo = nicfw::load_topology(opts.topology_file, nodes);
  if (!topo.ok()) return topo.status();
  return std::make_shared<const nicfw::topology>(*std::move(topo));
}

// Runs one node's body between the start and end barriers; returns whether it succeeded.
bool run_node(std::shared_ptr<comm::shm_segment> segment, std::uint32_t rank,
              const std::string& secret, const options& opts,
              const std::shared_ptr<const nicfw::topology>& topo,
              const std::function<void(node&)>& body) {
  base::set_log_node(static_cast<int>(rank));
  auto boot = std::make_unique<runtime::segment_bootstrap>(segment, rank, secret);
  auto nic = std::make_unique<nicfw::engine>(
      rank, topo, comm::make_shm_transport(segment, rank),
      nicfw::engine_options{.where = nic_placement_of(opts),
                            .local_nodes = segment->nodes(),
                            .local_index = rank});
  try {
    std::unique_ptr<node> self = detail::node_state::make_node(
        std::make_unique<detail::node_state>(std::move(boot), std::move(nic), opts));
    self->barrier();  // start: nobody sends before everyone can receive
    body(*self);
    self->quiesce();  // everything this node issued has executed here
    self->barrier();  // end: every node keeps serving the others until all are done
    return true;
  } catch (const std::exception& e) {
    ISO_LOG(runtime, error, "node %u failed: %s", rank, e.what());
    segment->mark_failed(rank);  // the node (and its bootstrap) is gone by now
    return false;
  }
}

int start_failure(const absl::Status& status) {
  std::fprintf(stderr, "iso: cannot start the job: %s\n", std::string(status.message()).c_str());
  return 1;
}

}  // namespace

int run(int argc, char** argv, const options& requested, const std::function<void(node&)>& body) {
  (void)argc;
  (void)argv;
  absl::StatusOr<options> opts = runtime::apply_environment(requested);
  if (!opts.ok()) return start_failure(opts.status());
  absl::StatusOr<runtime::launch_environment> env = runtime::read_launch_environment();
  if (!env.ok()) return start_failure(env.status());
  absl::StatusOr<std::shared_ptr<const nicfw::topology>> topo = load_topology(*opts, env->size);
  if (!topo.ok()) return start_failure(topo.status());

  if (env->transport == runtime::transport_kind::shm && env->shm_fd) {
    auto segment =
        comm::shm_segment::join(*env->shm_fd, *env->rank, env->size, env->secret,
                                segment_options(*opts));
    if (!segment.ok()) return start_failure(segment.status());
    return run_node(*std::move(segment), *env->rank, env->secret, *opts, *topo, body) ? 0 : 1;
  }

  // inproc, or no launcher at all: this process hosts every node of the job.
  auto segment = comm::shm_segment::create_private(env->size, env->secret, segment_options(*opts));
  if (!segment.ok()) return start_failure(segment.status());
  if (env->size == 1) return run_node(*segment, 0, env->secret, *opts, *topo, body) ? 0 : 1;
  std::atomic<bool> all_ok{true};
  std::vector<std::thread> threads;
  for (std::uint32_t rank = 0; rank < env->size; ++rank) {
    threads.emplace_back([&, rank] {
      if (!run_node(*segment, rank, env->secret, *opts, *topo, body)) all_ok = false;
    });
  }
  for (std::thread& t : threads) t.join();
  return all_ok ? 0 : 1;
}

int run(int argc, char** argv, const std::function<void(node&)>& body) {
  return run(argc, argv, options{}, body);
}

}  // namespace iso
