// Joining a job: the steps iso::run takes for each node of this process, split out so that
// the C API (c_api.cpp), which has no body to run, can join this process's node itself and
// keep it between iso_init() and iso_deinit().
//
//   absl::StatusOr<runtime::job_plan> plan = runtime::plan_job(iso::options{});
//   absl::StatusOr<runtime::process_node> joined = runtime::join_process_node(*plan);
//   joined->self->barrier();  // the start barrier is the caller's, as in iso::run
//
// Defined in run.cpp, next to iso::run, so that both share one way of building a node.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "iso/node.hpp"
#include "iso/options.hpp"
#include "nicfw/topology.hpp"
#include "runtime/bootstrap/launch_environment.hpp"
#include "runtime/bootstrap/pmix_session.hpp"
#include "runtime/config.hpp"
#include "runtime/fabric/fabric.hpp"

namespace iso::runtime {

// What a process learns about its job before any node exists.
struct job_plan {
  options opts;                                 // as requested, with ISO_* overrides applied
  launch_environment env;                       // from the launcher, or a job of one node
  std::shared_ptr<const nicfw::topology> topo;  // the logical topology for env.size nodes
  test_settings test;                           // from ISO_TEST_* (runtime/config.hpp)
  // A ucx job's connection to its PMIx launcher (rank, size and secret are in `env`).
  std::shared_ptr<pmix_session> pmix;
};

// Reads the settings (test settings too), the launcher's environment and the topology; in
// a ucx job, connects to the PMIx launcher (collective: every node plans at once).
// InvalidArgument (or the topology loader's error) names the bad variable or file;
// FailedPrecondition for ISO_TRANSPORT=ucx without a PMIx launcher or without UCX, and
// for several processes of a PMIx launcher without UCX. `have_ucx`: whether to plan as a
// build with the ucx fabric (what this build has, but for tests of the other kind).
absl::StatusOr<job_plan> plan_job(const options& requested, bool have_ucx = build_has_ucx());

// Builds node `rank` of the job from `fabric`: its bootstrap, its NIC and its state. The
// node has not passed the start barrier yet. Also makes `rank` the node shown in this
// thread's log lines. Throws iso::error.
std::unique_ptr<node> make_node(fabric& fabric, std::uint32_t rank, const job_plan& plan);

// A node's end of the job, after its work: waits until everything it issued has executed
// here, meets every other node at the end barrier (serving them until all are done), then
// leaves, so that its process may end without the others taking it for failed. Throws
// iso::error.
void leave_job(node& self);

// This process's one node of the job, before the start barrier.
struct process_node {
  std::shared_ptr<runtime::fabric> fabric;  // outlives `self`; mark_failed() on an error
  std::uint32_t rank = 0;
  std::unique_ptr<node> self;
};

// Joins the job as this process's only node: its rank of an `shm` job started by isorun or
// of a `ucx` job started by a PMIx launcher, or the single node of a job of one (no
// launcher). FailedPrecondition for an `inproc` job of
// more than one node, whose nodes all live in this process (only iso::run can host those).
absl::StatusOr<process_node> join_process_node(const job_plan& plan);

// The C API's node (c_api.cpp), for tests that look inside: the nodes holding the page of
// the classic address `address`. FailedPrecondition before iso_init() and after
// iso_deinit(); OutOfRange outside the classic memory.
absl::StatusOr<std::vector<std::uint32_t>> c_api_copyset(std::uint64_t address);
// The C API's node, for tests that count: how often it has looked at the job's health.
// FailedPrecondition before iso_init() and after iso_deinit().
absl::StatusOr<std::uint64_t> c_api_job_checks();

}  // namespace iso::runtime
