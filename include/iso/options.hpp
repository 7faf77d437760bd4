// Settings of a node. Every field has a default that suits a 2-core machine; the
// environment can override them (ISO_<NAME in upper case>, e.g. ISO_RING_CAPACITY=1048576)
// and `isorun --print-config` shows the effective values.
//
//   iso::options opts;
//   opts.ring_capacity = 1 << 20;
//   return iso::run(argc, argv, opts, [](iso::node& node) { ... });
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace iso {

// How a node's emulated NIC runs: on its own thread (pinned away from the application) or
// inline, run by the application thread whenever it calls into the runtime. ("Placement"
// is where shared memory's copies live: iso::placement.)
enum class nic_mode { automatic, thread, inline_poll };
// The name nic_mode had before; programs written with it still build.
using nic_placement = nic_mode;

// How an iso::ordered_group orders its messages (iso/ordered_group.hpp): a sequencer (a
// counter held by one member's NIC numbers the messages, NICs forward them along trees),
// or isotach (each message an isochronous multicast, ordered with shared variables too).
enum class order_kind { sequencer, isotach };

// How a node waits for another (for a value, a pulse, a barrier, credits):
//   spin:  polls for a while, then yields its core between polls, and only then parks its
//          logical time and sleeps. The fastest answer when every node has a core.
//   block: polls a few times, then sleeps in the kernel until a packet for it arrives,
//          without parking, so the core goes to a node that can make progress; it parks
//          only after 50 ms in which nothing arrived.
//   automatic: block when the job has more nodes than this machine gives it cores
//          (isorun says so when it starts such a job), spin otherwise. Blocking so, a node
//          polls and yields instead of sleeping while fewer of its host's other nodes are
//          busy (not waiting themselves) than there are cores: the busy ones then have the
//          cores they need, a yield hands the core to anything else that can run, and
//          waking a sleeper costs each sender a system call. For half a millisecond
//          without any traffic at most; then it sleeps. Not under a PMIx launcher (its
//          nodes cannot see each other's waits) nor with a NIC thread (ISO_NIC=thread).
enum class wait_mode { automatic, spin, block };

// Whether a node's thread is bound to a core of its own. Unbound on a machine the job fills,
// the scheduler may put two nodes of a job on one core for a while, where one polls while
// the other, whose answer it waits for, cannot run: the same program then runs some times 3
// to 15 times slower than others. Bound one node per core, they never meet.
//   core:  node i binds the thread that starts it to the i-th core it may use (its affinity
//          mask; a core's hardware threads go together), when there is a core for every
//          node on this host, and for every NIC thread too where the NICs run on threads of
//          their own (those keep where options::nic puts them); otherwise it logs why and
//          runs unbound. Threads the node's thread starts while bound inherit the binding;
//          when the node ends, its thread gets back the processors it had.
//   none:  never binds; the scheduler places the threads.
//   automatic: core for a job of two nodes or more that isorun started with one process
//          per node, where the job's threads (nodes, and NIC threads if any) take more than
//          half of the cores: on a roomier machine the scheduler keeps them apart by
//          itself, and jobs run side by side, each binding from the first core, would
//          crowd onto the same few cores (as mpirun's do; it binds jobs of up to two
//          processes to cores by default). none otherwise: one node, threads of one
//          process, and other launchers' jobs (mpirun --bind-to).
// node::status().binding says where a node runs; `isorun --bind` sets this for a job.
enum class cpu_binding { automatic, core, none };

// The cores this process may run on: its affinity mask (sched_getaffinity), which taskset,
// cgroups and batch systems narrow (and options::binding, on a node's thread while it is
// bound); 1 if the mask cannot be read. What `automatic` compares
// a job's nodes with, and what isorun counts to say that a job is oversubscribed. Never
// blocks; thread-safe.
[[nodiscard]] std::uint32_t usable_cores();

struct options {
  // Bytes of buffer for each ordered pair of nodes; a power of two from 1 KiB to 1 GiB.
  // Bounds the largest message (a quarter of it) and how far a sender may run ahead.
  std::size_t ring_capacity = 256 * 1024;
  // How long start-up waits for every node of the job before failing.
  std::chrono::milliseconds join_timeout{10'000};
  // How long barrier() (and the barriers at start and end) wait before failing.
  std::chrono::milliseconds barrier_timeout{60'000};
  // How long a call to a single copy on another node waits for a sign of life from the
  // owner (its reply, or its note that the call waits there for a guard) before it ends
  // with deadline_exceeded (iso/object.hpp). A guarded call the owner has queued waits on.
  // Also how long a call or an inspection waits for a replica or a copy on its way to
  // this node.
  std::chrono::milliseconds object_call_timeout{60'000};
  // Visit peers in a random order when polling, to expose code that relies on an order
  // the runtime does not promise (on by default in debug builds).
  bool shuffle = false;
  // automatic: a thread per NIC when the machine has at least two cores per node.
  nic_mode nic = nic_mode::automatic;
  // How long an idle NIC thread spins before it sleeps on its doorbell. A thread forced
  // where it has no core of its own (nic_mode::thread with fewer than two cores per node,
  // or more nodes than cores) sleeps at once whatever this says.
  std::chrono::microseconds nic_spin{50};
  // How a node waits for another node (see wait_mode).
  wait_mode wait = wait_mode::automatic;
  // Whether each node's thread is bound to a core of its own (see cpu_binding).
  cpu_binding binding = cpu_binding::automatic;
  // The logical topology (protobuf text format, see nicfw/examples/); empty: one switch.
  std::string topology_file;
  // Isotach memory is allocated in pages of this many variables (a power of two); each
  // page has a copyset.
  std::uint32_t page_variables = 512;
  // Record every executed operation (node::trace()), for checkers and teaching.
  bool trace = false;
  // Flow control: bytes of isotach data, and of plain messages, that one node may have in
  // flight to another (sent and not yet executed or received there). Bounds what a
  // receiver buffers per sender; a larger message waits until nothing else is in flight.
  std::size_t credit_window = 256 * 1024;
  // Paranoid mode: sequence numbers and CRC-32 checksums on every packet, checked by the
  // receiver, and the executed pulse of every remote isochron part echoed to its issuer and
  // checked against the isochron marker. A violation stops the job, naming the packet,
  // the sender and what was expected. Costs a checksum per packet and an echo per part.
  bool paranoid = false;
  // Same-host reads: a read-only isochron whose reads all go to one other node on this
  // host is served from that node's copy (in its memory window) instead of through the
  // NICs, when logical time allows; otherwise it takes the NIC path as usual. Sequential
  // consistency holds either way (docs/same-host-reads.md). Off: every remote read takes
  // the NIC path.
  bool direct_reads = true;
  // Bytes of each node's memory window: its copies of shared pages live there while they
  // fit (16 bytes per variable; pages beyond it are read through the NICs). Only what is
  // used costs memory.
  std::size_t window_bytes = 16 * 1024 * 1024;
  // The order an iso::ordered_group uses when it names none.
  order_kind ordering = order_kind::sequencer;
  // The total order of shared objects' writes (iso/object.hpp): the job-wide order through
  // which every replicated object's writes, creations by one node and migrations go.
  // sequencer (the default) or isotach; only under isotach may an object write join an
  // isochron (object::start(isochron&, ...)). Every node of a job must use the same: the
  // first object creation fails on every node otherwise, naming both orders.
  order_kind object_order = order_kind::sequencer;
  // The spanning trees along which NICs forward a sequenced group's messages: "binary"
  // (the default), "chain" (deep: for one sender of large messages) or "binomial".
  std::string multicast_tree = "binary";
  // Relaxed mode, for teaching only: the job is NOT sequentially consistent. It gives up SC
  // in exactly two places, and nowhere else:
  //   writes  a plain write (isochron::write) is applied at each copy when it arrives
  //           there, without waiting for its isochron's logical time: at the issuing node's
  //           own copy when the isochron ends, at another node's copy as soon as that
  //           node's NIC hands the part to it (before the pulse's end). It is applied once
  //           more at its logical time, so each copy ends every pulse holding what isotach
  //           would hold there (until then, a copy may show writes in arrival order, even
  //           an older one over a newer one: coherence is given up too);
  //   reads   an isochron that only reads, and only copies this node holds, is served at
  //           once from those copies as they stand, even while isochrons this node issued
  //           earlier still wait for their logical time. Every other read (of another
  //           node's copy, or in an isochron that also writes) executes at its logical time
  //           at the copy it reads, as in isotach, and there sees every write that has
  //           arrived, later ones included (so an isochron that writes and reads is no
  //           longer atomic); a read of another node's copy always takes the NIC
  //           (options::direct_reads has no effect in relaxed mode).
  // Everything else keeps its logical time: the rest of an isochron (its reads, its
  // read-modify-writes, sched and assign, messages, signals, barrier arrivals) still runs
  // at its pulse, pulses and EOPs flow as ever, and barrier() still waits for every earlier
  // isochron, so after a barrier every copy holds the same values again. The history
  // (options::trace) records each write where and when it was first applied. Store buffering
  // (SB), message passing (MP), load buffering (LB) and IRIW then can show the outcomes SC
  // forbids (docs/tutorial-sc.md, iso-litmus --compare). Off (the default), the job runs
  // isotach's path unchanged. Every node of a job must use the same setting; each node logs
  // a warning when it is on; node::set_relaxed switches a job that asked for it back and
  // forth.
  bool relaxed = false;
};

// One setting as the runtime will use it: its environment variable, unit, meaning and
// effective value (the field's value in `requested`, or the environment's override).
struct option_description {
  std::string name;
  std::string unit;
  std::string help;
  std::string value;
  std::string range;  // the values that work, e.g. "power of two, 1024 to 1073741824"
};

// Every setting that can be overridden from the environment, with the value it would take
// for `requested` in this environment. Also how `isorun --print-config` prints the table.
// A malformed override is shown with its text and the error in `value`.
std::vector<option_description> describe_options(const options& requested = {});

}  // namespace iso
