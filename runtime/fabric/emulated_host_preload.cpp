// A library preloaded into a program that cannot enter its emulated host by itself: an MPI
// peer measured beside iso on the same lanes between emulated hosts (tools/netns-job.sh
// --preload). It enters the namespace of its node's emulated host (ISO_TEST_NETNS, the
// launcher's PMIX_RANK, ISO_TEST_NODES_PER_HOST) at the program's first ucp_init, as an
// iso node does once it has joined PMIx: by then MPI_Init has connected to the launcher's
// PMIx server, which listens on the machine's loopback, and UCX has not yet looked for
// network devices. Without ISO_TEST_NETNS it only passes the call on.
#include <dlfcn.h>
#include <ucp/api/ucp.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "absl/strings/numbers.h"
#include "runtime/fabric/emulated_host.hpp"

namespace {

[[noreturn]] void give_up(const std::string& why) {
  std::fprintf(stderr, "emulated host preload: %s\n", why.c_str());
  std::_Exit(3);
}

std::uint32_t number_from(const char* variable, std::uint32_t fallback, std::uint32_t least) {
  const char* text = std::getenv(variable);
  if (text == nullptr) return fallback;
  std::uint32_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value < least) {
    give_up(std::string(variable) + " is '" + text + "'; expected a number from " +
            std::to_string(least));
  }
  return value;
}

// The calling thread, and the threads it starts later: namespaces are per thread, so a
// program whose first ucp_init runs on a thread that is not its main one (or that starts
// UCX on several threads) is not one this serves. Open MPI's pml ucx initialises on the
// main thread inside MPI_Init.
void enter() {
  const char* prefix = std::getenv("ISO_TEST_NETNS");
  if (prefix == nullptr || *prefix == '\0') return;
  if (std::getenv("PMIX_RANK") == nullptr) give_up("no PMIX_RANK: not started by a PMIx launcher");
  const std::uint32_t rank = number_from("PMIX_RANK", 0, 0);
  const std::uint32_t per_host = number_from("ISO_TEST_NODES_PER_HOST", 1, 1);
  const std::string name = iso::runtime::emulated_host_name(prefix, rank, per_host);
  if (const absl::Status s = iso::runtime::enter_emulated_host(name); !s.ok()) {
    give_up(std::string(s.message()));
  }
  // Said once per process, so that a run shows where its peer ran.
  std::fprintf(stderr, "emulated host preload: rank %u in %s\n", rank, name.c_str());
}

}  // namespace

// Interposed on UCX's own (ucp_init() calls it).
extern "C" ucs_status_t ucp_init_version(unsigned api_major_version, unsigned api_minor_version,
                                         const ucp_params_t* params, const ucp_config_t* config,
                                         ucp_context_h* context_p) {
  using init_fn = ucs_status_t (*)(unsigned, unsigned, const ucp_params_t*, const ucp_config_t*,
                                   ucp_context_h*);
  static std::once_flag entered;
  std::call_once(entered, enter);
  static const auto next = reinterpret_cast<init_fn>(::dlsym(RTLD_NEXT, "ucp_init_version"));
  if (next == nullptr) give_up("UCX's ucp_init_version is not loaded");
  return next(api_major_version, api_minor_version, params, config, context_p);
}
