#include "iso/run.hpp"

#include <atomic>
#include <cstdio>
#include <exception>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/log.hpp"
#include "comm/shm_segment.hpp"
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

// Runs one node's body between the start and end barriers; returns whether it succeeded.
bool run_node(std::shared_ptr<comm::shm_segment> segment, std::uint32_t rank,
              const std::string& secret, const options& opts,
              const std::function<void(node&)>& body) {
  base::set_log_node(static_cast<int>(rank));
  auto boot = std::make_unique<runtime::segment_bootstrap>(segment, rank, secret);
  runtime::segment_bootstrap& boot_ref = *boot;
  auto transport = comm::make_shm_transport(segment, rank);
  std::unique_ptr<node> self = detail::node_state::make_node(
      std::make_unique<detail::node_state>(std::move(boot), std::move(transport), opts));
  try {
    self->barrier();  // start: nobody sends before everyone can receive
    body(*self);
    self->barrier();  // end: nobody tears down while others may still send to it
    return true;
  } catch (const std::exception& e) {
    ISO_LOG(runtime, error, "node %u failed: %s", rank, e.what());
    boot_ref.abort_job();
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

  if (env->transport == runtime::transport_kind::shm && env->shm_fd) {
    auto segment =
        comm::shm_segment::join(*env->shm_fd, *env->rank, env->size, env->secret,
                                segment_options(*opts));
    if (!segment.ok()) return start_failure(segment.status());
    return run_node(*std::move(segment), *env->rank, env->secret, *opts, body) ? 0 : 1;
  }

  // inproc, or no launcher at all: this process hosts every node of the job.
  auto segment = comm::shm_segment::create_private(env->size, env->secret, segment_options(*opts));
  if (!segment.ok()) return start_failure(segment.status());
  if (env->size == 1) return run_node(*segment, 0, env->secret, *opts, body) ? 0 : 1;
  std::atomic<bool> all_ok{true};
  std::vector<std::thread> threads;
  for (std::uint32_t rank = 0; rank < env->size; ++rank) {
    threads.emplace_back([&, rank] {
      if (!run_node(*segment, rank, env->secret, *opts, body)) all_ok = false;
    });
  }
  for (std::thread& t : threads) t.join();
  return all_ok ? 0 : 1;
}

int run(int argc, char** argv, const std::function<void(node&)>& body) {
  return run(argc, argv, options{}, body);
}

}  // namespace iso
