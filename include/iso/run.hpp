// Starting a program as a job: SPMD, every node runs the same body.
//
//   int main(int argc, char** argv) {
//     return iso::run(argc, argv, [](iso::node& node) { ... });
//   }
//
// Launched by `isorun -n N prog`, each of the N processes runs the body once as its node
// (`shm` transport). Launched by `isorun -n N --transport inproc prog`, the one process runs
// the body on N threads, one per node. Started directly, the program is a job of one node.
// Start and end are barriers: no node runs its body before every node has joined, and none
// tears down before every node has finished, so no message is lost in between.
#pragma once

#include <functional>

#include "iso/node.hpp"
#include "iso/options.hpp"

namespace iso {

// Runs `body` for this process's node(s) and returns the process exit status: 0 when every
// body returned, 1 (after printing the error with the node's id to stderr) when a body threw
// or the job could not start. `argc`/`argv` are not modified; they are taken so that later
// versions can read runtime flags without changing this signature.
// A process started by isorun as one node of an shm job joins its job once: a second call
// (or one after iso_init) returns 1 with an error saying so, as does a second process that
// claims a node another process has joined. Started without a launcher, or with
// --transport inproc, each call runs a job of its own. A setting out of range (in `opts` or
// an ISO_* variable) returns 1 with an error naming it and its valid values.
int run(int argc, char** argv, const options& opts, const std::function<void(node&)>& body);
int run(int argc, char** argv, const std::function<void(node&)>& body);

}  // namespace iso
