/* The classic isotach C API: the calls of the Regehr report and the Ironman technical report,
 * so that the original C programs port line for line. Plain C (C11) and C++; implemented on
 * the C++ API (iso/iso.hpp), which new C++ code should use instead.
 *
 *   #include <iso/iso.h>
 *   int main(void) {
 *     struct iso_var v;
 *     iso_init();  // on failure: a message on stderr, and the process ends
 *     if (NODEID == 0) { iso_start(); iso_write32(7, 42); iso_end(); }
 *     iso_barrier();
 *     iso_start(); iso_read32(7, &v); iso_end();
 *     printf("node %d of %d sees %ld\n", NODEID, NUMNODES, read_iso_var(&v));
 *     return iso_deinit() == ISO_SUCCESS ? 0 : 1;
 *   }
 *
 * Run it as a job with `isorun -n 4 -- ./prog` (one node per process); started directly it
 * is a job of one node.
 *
 * MEMORY. The classic flat isotach memory, allocated by iso_init():
 *   32-bit variables at addresses 0 .. ISO_MEM32_SIZE-1,
 *   64-bit variables at addresses ISO_MEM64_BASE .. ISO_MEM64_BASE+ISO_MEM64_SIZE-1.
 * Every variable starts at 0. A 32-bit call (iso_read32, iso_sched, ...) takes a 32-bit
 * address, a 64-bit call a 64-bit address; the other width is an error. Memory is made of
 * pages of ISO_PAGE_SIZE variables (page p holds addresses p*ISO_PAGE_SIZE and on), each
 * kept by a set of nodes, its copyset: reads go to the nearest copy, changes go to every
 * copy. By default every page is on every node. Where pages live changes speed, never
 * results.
 *
 * SHMEM MAP. If the environment variable ISO_SHMEM_MAP names a file, iso_init() places the
 * pages it names as it says. One region per line, `#` starts a comment:
 *   <first_page> <page_count> <copyset>
 * where copyset is `all` or a comma list of node ids, e.g. `128 4 0,2` puts 64-bit addresses
 * 65536 .. 67583 on nodes 0 and 2. Pages 0..127 hold the 32-bit variables, pages 128..255
 * the 64-bit ones; pages the file does not name are on every node, and a page may be named
 * once. A line may also be in the Regehr report's syntax, `page [-page] :node [,node]*;`,
 * e.g. `128-131 : 0,2;`. Every node must read the same map. An unreadable or malformed file makes
 * iso_init() fail with a message naming the file, the line and the bad token.
 *
 * ISOCHRONS. Operations are grouped between iso_start() and iso_end() into an isochron: they
 * take effect atomically, at one logical time on every node, and all isochrons of all nodes
 * execute in one order that respects each node's issue order (sequential consistency).
 * Calls inside an isochron never block; iso_end() issues it and blocks only while the NIC's
 * queue is full. Read results arrive later, in read handles (iso_var32, iso_var64).
 *
 * ERRORS. Calls that return int return ISO_SUCCESS (0) or an error code (the ISO_E_*
 * values, equal to iso::error_code and absl::StatusCode); iso_last_error() gives the
 * message. A failed operation adds nothing to the isochron, which stays open. The classic
 * calls that cannot return a code (iso_init, read_iso_var32/64) end the process with the
 * message on stderr, as the Regehr report specifies for iso_init; iso_try_init and
 * iso_var_wait32/64 return the code instead.
 *
 * THREADS. One node per process, used by one thread at a time: the calls are not
 * thread-safe, so a program that calls them from several threads must serialise the calls.
 * iso_last_error() is per thread. Isochronous message handlers run on the thread that is
 * inside an iso_* call at the time (see iso_set_handler).
 */
#ifndef ISO_ISO_H_
#define ISO_ISO_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Return codes (the same numbers as iso::error_code in iso/error.hpp) ---------------- */
#define ISO_SUCCESS 0
#define ISO_E_CANCELLED 1
#define ISO_E_UNKNOWN 2
#define ISO_E_INVALID_ARGUMENT 3  /* bad input: NULL pointer, wrong width, bad node id */
#define ISO_E_DEADLINE_EXCEEDED 4 /* a barrier or the start-up timed out */
#define ISO_E_NOT_FOUND 5         /* no handler under that id; no such map file */
#define ISO_E_ALREADY_EXISTS 6
#define ISO_E_PERMISSION_DENIED 7
#define ISO_E_RESOURCE_EXHAUSTED 8  /* e.g. an isochron too large for the NIC's queue */
#define ISO_E_FAILED_PRECONDITION 9 /* a call at the wrong time: see each call */
#define ISO_E_ABORTED 10            /* another node of the job failed */
#define ISO_E_OUT_OF_RANGE 11       /* an address outside isotach memory */
#define ISO_E_UNIMPLEMENTED 12
#define ISO_E_INTERNAL 13
#define ISO_E_UNAVAILABLE 14
#define ISO_E_DATA_LOSS 15

/* ---- The flat memory --------------------------------------------------------------------- */
#define ISO_MEM32_SIZE 65536u /* 32-bit variables: addresses 0 .. 65535 */
#define ISO_MEM64_BASE 65536u /* 64-bit variables: addresses 65536 .. 131071 */
#define ISO_MEM64_SIZE 65536u
#define ISO_PAGE_SIZE 512u /* variables per page of the shmem map */

/* ---- Read handles ------------------------------------------------------------------------ */
/* Where a read's value arrives. The fields are private: use only the calls below. A handle
 * is empty (zero-filled or ISO_VAR32_INIT), pending (filled by iso_read32, its value on the
 * way) or done (read_iso_var32 returned its value, which it keeps). A pending handle holds a
 * slot of the node's read table until read_iso_var32 or iso_var_release32; a handle dropped
 * while pending keeps its slot until iso_deinit(). A copy of a pending handle is not a second
 * handle: after one of them is read or released, the other is stale (ISO_E_INVALID_ARGUMENT). */
typedef struct iso_var32 {
  uint32_t state_;
  uint32_t slot_;
  uint32_t generation_;
  uint32_t value_;
} iso_var32;

typedef struct iso_var64 {
  uint32_t state_;
  uint32_t slot_;
  uint32_t generation_;
  uint32_t reserved_;
  uint64_t value_;
} iso_var64;

/* shmem_addr_t: an address of the flat memory (the classic name). */
typedef uint64_t shmem_addr_t;

/* clang-format off */
#define ISO_VAR32_INIT {0, 0, 0, 0}
#define ISO_VAR64_INIT {0, 0, 0, 0, 0}
/* clang-format on */

/* ---- Joining and leaving the job --------------------------------------------------------- */

/* iso_init, iso_try_init: join the job described by the launcher's environment (ISO_RANK, ISO_SIZE,
 * ... as set by isorun; without them, a job of one node) as this process's node, waits until every
 * node has joined (the start barrier), and allocates the flat memory, placed by the shmem map
 * if ISO_SHMEM_MAP names one. Settings come from the ISO_* variables (isorun
 * --print-config). Handlers registered before iso_init are installed before the start
 * barrier, so messages cannot reach a node before its handlers.
 * Blocks: until every node has joined (ISO_JOIN_TIMEOUT_MS, then ISO_E_DEADLINE_EXCEEDED).
 * iso_init returns only on success: on failure it prints "iso_init: <message>" on stderr and
 *   ends the process with exit status 1 (Regehr report, B.3.1), which fails the job.
 * iso_try_init returns: ISO_SUCCESS; ISO_E_FAILED_PRECONDITION when called a second time (a process
 *   joins once, even after iso_deinit or a failed iso_init) or in an `inproc` job of several
 *   nodes (the C API needs one node per process); ISO_E_INVALID_ARGUMENT for a malformed
 *   environment variable or shmem map; ISO_E_NOT_FOUND for a missing map file; the code of
 *   any other start-up failure (a peer that died: ISO_E_ABORTED). */
void iso_init(void);
int iso_try_init(void);

/* iso_deinit: waits until every isochron this node issued has executed here and every read
 * has its value, then waits at the end barrier for every node (serving the other nodes
 * meanwhile, so that nobody leaves while others still need it), then leaves the job. Read
 * handles still pending become stale.
 * Called in a message handler (the report's lat.c does), it returns ISO_SUCCESS at once and
 * the node leaves when the call that ran the handler (iso_poll, a read, ...) returns; a
 * failure of that leave is that call's code.
 * A node that returns from main (or calls exit) without it leaves as iso_deinit would,
 * from the exit hook: "bad form" in the report, not an error. If that leave fails (the end
 * barrier times out, another node failed), it says why on stderr and its exit status is 1.
 * A node that exits inside a handler, inside an isochron or after a classic call ended the
 * process leaves as a failed node instead (the job fails) and says why on stderr.
 * A deferred leave waits for iso_end when an isochron is open; the call that runs it
 * blocks as iso_deinit does, and returns iso_deinit's codes.
 * Blocks: as described; a read still waiting for another node's assign that never comes
 *   blocks forever.
 * Returns: ISO_SUCCESS; ISO_E_FAILED_PRECONDITION before iso_init, after iso_deinit, while
 *   an isochron is open (call iso_end first; nothing is torn down), or when a read waits in
 *   this node's copy for the assign of a sched of its own it never made (the node leaves as
 *   a failed one, naming the address); ISO_E_DEADLINE_EXCEEDED
 *   when the end barrier times out, ISO_E_ABORTED when another node failed (the node leaves
 *   the job anyway, marked as failed). */
int iso_deinit(void);

/* iso_node_id, iso_node_count: this node's id (0 .. count-1) and the number of nodes; -1
 * outside iso_init .. iso_deinit. Never block. */
int iso_node_id(void);
int iso_node_count(void);

/* iso_barrier: waits until every node has called iso_barrier as often as this one. Ordered:
 * every isochron any node issued before its barrier has executed on every node when
 * iso_barrier returns, so reads after it see the writes before it.
 * Blocks: until every node arrives (ISO_BARRIER_TIMEOUT_MS, then ISO_E_DEADLINE_EXCEEDED:
 *   this node's arrival stands, and calling iso_barrier again waits for the same barrier).
 * Returns: ISO_SUCCESS; ISO_E_FAILED_PRECONDITION outside iso_init .. iso_deinit, inside an
 *   isochron or a handler, or when the nodes made different collective calls there;
 *   ISO_E_ABORTED when another node failed. */
int iso_barrier(void);

/* iso_poll: makes progress without blocking: executes what is due and serves the other
 * nodes (and runs due message handlers). Call it in long computations between isotach
 * calls, so that this node does not hold the others up. It blocks in one case only: a
 * handler it ran called iso_deinit, whose leave then runs here (see iso_deinit). Every
 * poll also checks the job, so a poll loop, which waits on nobody, still learns:
 *   - that a node failed: at the next poll;
 *   - that a node's process ended without leaving the job (_exit, a signal, before
 *     iso_deinit or its exit hook): "node N ended before leaving the job", within about
 *     0.1 s of its end where this node can see that process, and at the next poll once
 *     isorun reaped it (also from another pid namespace, as in a container);
 *   - that a node stopped responding: only once its process, where this node can see it,
 *     has stayed stopped (SIGSTOP, a debugger) for half of ISO_BARRIER_TIMEOUT_MS; a
 *     shorter stop holds up nobody that only polls, and is no failure.
 * A node that left the job (iso_deinit, or its exit hook) and then ended is the job's
 * normal end: nobody is told anything.
 * Returns: ISO_SUCCESS; ISO_E_FAILED_PRECONDITION outside iso_init .. iso_deinit or inside
 *   a handler. Classic programs poll in `while (1) iso_poll();` without looking at the code,
 *   so it does not return in two cases: after this node left the job through a successful
 *   iso_deinit (nothing can come any more) it ends the process with exit status 0; once the
 *   job has failed (another node failed) it prints "iso_poll: <why>" on stderr and ends the
 *   process with exit status 1. */
int iso_poll(void);

/* ---- Isochrons --------------------------------------------------------------------------- */

/* iso_start: opens an isochron; the operations until iso_end belong to it.
 * Returns: ISO_SUCCESS; ISO_E_FAILED_PRECONDITION outside iso_init .. iso_deinit or when an
 *   isochron is already open (isochrons do not nest). Never blocks. */
int iso_start(void);

/* iso_end: issues the open isochron: from now on it may execute, and its reads' values may
 * arrive. Blocks only while the NIC's queue is full.
 * Returns: ISO_SUCCESS; ISO_E_FAILED_PRECONDITION when no isochron is open;
 *   ISO_E_RESOURCE_EXHAUSTED when it is too large for the NIC's queue (it is dropped). */
int iso_end(void);

/* The operations below add to the open isochron and never block. Each returns ISO_SUCCESS
 * or: ISO_E_FAILED_PRECONDITION outside an isochron ("... outside an isochron; call
 * iso_start first") or outside iso_init .. iso_deinit; ISO_E_OUT_OF_RANGE for an address
 * outside the flat memory; ISO_E_INVALID_ARGUMENT for an address of the other width (a
 * 32-bit call on a 64-bit address or the reverse) or a NULL handle. */

/* iso_read32, iso_read64: reads the variable at `address` into the handle `var` (see Read
 * handles), which is pending from now on. The value is the variable's at the isochron's
 * logical time; if the variable is unsubstantiated then (a sched is outstanding), the value
 * is that of the assign that substantiates it. If `var` is still pending from an earlier
 * read, that read is released first. */
int iso_read32(shmem_addr_t address, iso_var32* var);
int iso_read64(shmem_addr_t address, iso_var64* var);

/* iso_fetch_add32/64, iso_swap32/64, iso_compare_swap32/64: atomic read-modify-writes. Each
 * executes at every copy of the variable at the isochron's logical time, in the one global
 * order, so every copy computes the same value with no round trip and no lock; `old` (a read
 * handle, as for iso_read32) gets the value just before. fetch_add adds `delta` (wrapping at the
 * variable's width); swap stores `value`; compare_swap stores `desired` if the variable holds
 * `expected`, and succeeded exactly when `old` then equals `expected`. On an unsubstantiated
 * variable one waits like a read and applies to the assigned value. */
int iso_fetch_add32(shmem_addr_t address, long delta, iso_var32* old);
int iso_fetch_add64(shmem_addr_t address, long long delta, iso_var64* old);
int iso_swap32(shmem_addr_t address, long value, iso_var32* old);
int iso_swap64(shmem_addr_t address, long long value, iso_var64* old);
int iso_compare_swap32(shmem_addr_t address, long expected, long desired, iso_var32* old);
int iso_compare_swap64(shmem_addr_t address, long long expected, long long desired, iso_var64* old);

/* NIC counters (C++: iso/counter.hpp): 64-bit fetch-and-add counters held by one node's
 * network interface and answered by it, not by that node's program, outside isochrons and
 * logical time. For handing out work: every value is returned exactly once.
 * iso_counter_alloc: allocates a counter held by node `holder`, starting at 0, into *out.
 *   Collective: every node makes the same allocations in the same order (it waits for all,
 *   as iso_barrier does, but orders no memory).
 * iso_counter_fetch_add: adds `delta` to `counter` and stores the value before the add in
 *   *before. Blocks until the answer is here; one node's adds apply in the order made. May
 *   be called inside an isochron (it is not part of it).
 * Returns: ISO_SUCCESS; ISO_E_INVALID_ARGUMENT for a NULL pointer, a holder outside the job
 *   or a counter no allocation made (nothing is sent); ISO_E_FAILED_PRECONDITION outside
 *   iso_init .. iso_deinit, inside a handler, or (iso_counter_alloc) inside an isochron;
 *   ISO_E_ABORTED when another node failed. */
typedef struct iso_counter {
  uint32_t holder;
  uint64_t index;
} iso_counter;
int iso_counter_alloc(int holder, iso_counter* out);
int iso_counter_fetch_add(iso_counter counter, uint64_t delta, uint64_t* before);

/* iso_write32, iso_write64: sets the variable to `value` (a sched and an assign in one). The
 * value is stored in the variable's width: a 32-bit variable keeps the low 32 bits, so -1
 * and 0xffffffff are the same value (read_iso_var32 returns it as -1). */
int iso_write32(shmem_addr_t address, long value);
int iso_write64(shmem_addr_t address, long long value);

/* iso_sched (32-bit), iso_sched64: makes the variable unsubstantiated: reads after this
 * isochron (in logical time) wait for this node's assign. Also ISO_E_FAILED_PRECONDITION
 * when this node already has an outstanding sched on the variable. */
int iso_sched(shmem_addr_t address);
int iso_sched64(shmem_addr_t address);

/* iso_assign32, iso_assign64 (iso_assign: the classic name of iso_assign32): gives `value` to
 * this node's outstanding sched of the variable, which it completes. Also
 * ISO_E_FAILED_PRECONDITION when this node has no outstanding sched there. */
int iso_assign32(shmem_addr_t address, long value);
int iso_assign64(shmem_addr_t address, long long value);

/* ---- Read results ------------------------------------------------------------------------ */

/* read_iso_var32, read_iso_var64 (read_iso_var: the classic name of read_iso_var32): the
 * read's value, signed as in the Regehr report (a 32-bit variable holding 0xffffffff reads
 * as -1). Blocks until it arrives, making progress (this node keeps serving the others).
 * Releases the handle's slot; the handle is done and keeps the value, so reading it again
 * returns the same value at once. They cannot return an error, so on failure they print
 * "read_iso_var32: <message>" on stderr and end the process with exit status 1 (which fails
 * the job): outside iso_init .. iso_deinit, an empty, stale or uninitialised handle (e.g. of
 * an iso_read32 that failed), a read whose isochron is still open (it could never arrive:
 * call iso_end first), inside a message handler, or a failed job. iso_var_wait32/64 return
 * the code instead. */
long read_iso_var32(iso_var32* var);
long long read_iso_var64(iso_var64* var);

/* iso_var_wait32, iso_var_wait64: read_iso_var32/64 with a return code: stores the value in
 * `*value` and returns ISO_SUCCESS, or returns the error code (ISO_E_INVALID_ARGUMENT for a
 * bad handle or a NULL pointer, ISO_E_FAILED_PRECONDITION for a call at the wrong time, the
 * job's failure) and leaves `*value` alone. Blocks as read_iso_var32. */
int iso_var_wait32(iso_var32* var, uint32_t* value);
int iso_var_wait64(iso_var64* var, uint64_t* value);

/* iso_var_ready32, iso_var_ready64: whether read_iso_var32/64 would return without
 * blocking. Never blocks (it makes progress once, as iso_poll), except to run a leave that
 * iso_deinit deferred from a handler run by that progress (see iso_deinit).
 * Returns: 1 ready (or done), 0 not yet (also while the read's isochron is open), or a
 *   negative error code: -ISO_E_INVALID_ARGUMENT for an empty, stale or uninitialised handle,
 *   -ISO_E_FAILED_PRECONDITION outside iso_init .. iso_deinit or inside a handler. */
int iso_var_ready32(iso_var32* var);
int iso_var_ready64(iso_var64* var);

/* iso_var_release32, iso_var_release64: drops the handle's read, if any, and frees its slot
 * (a value still on its way is discarded on arrival); the handle is empty afterwards. Needed
 * only for a read whose value is not wanted. Never blocks; may be called at any time (also
 * before iso_init and after iso_deinit) except inside a handler.
 * Returns: ISO_SUCCESS; ISO_E_INVALID_ARGUMENT for NULL or an uninitialised handle;
 *   ISO_E_FAILED_PRECONDITION inside a handler. */
int iso_var_release32(iso_var32* var);
int iso_var_release64(iso_var64* var);

/* ---- Isochronous messages ---------------------------------------------------------------- */

/* MAX_ISO_HANDLERS: handler ids are 0 .. MAX_ISO_HANDLERS-1. */
#define MAX_ISO_HANDLERS 1024
/* MAX_ISO_MSG_SIZE: the largest message iso_send_msg accepts, in bytes (a job whose NIC
 * queue is set smaller than the default may accept less: see iso_send_msg). */
#define MAX_ISO_MSG_SIZE 65536

/* iso_handler: the function type of a message handler (Regehr report, B.5), so a handler is
 * declared `void handler(int sender, void* data, int length)`. It gets the sender's node id
 * and the payload (`data` may be NULL when `length` is 0; it is valid only during the call:
 * copy what must outlast it). It runs at the message's logical time, ordered with every
 * other operation, on this node's thread inside whichever iso_* call is making progress at
 * the time (iso_poll, iso_barrier, read_iso_var32, ...). It must be short, and may call only
 * iso_node_id, iso_node_count and iso_last_error: other calls fail with
 * ISO_E_FAILED_PRECONDITION (and those that cannot return a code end the process). */
typedef void iso_handler(int sender, void* data, int length);

/* iso_set_handler: sets handler `handler_id` (0 .. MAX_ISO_HANDLERS-1) to `fn`, and returns
 * the function it was set to before (NULL if none). `fn` NULL clears it. Register the same
 * ids on every node before any node can send to them: before iso_init (installed before the
 * start barrier), or after it followed by iso_barrier on every node before the first send.
 * A message for an id cleared where it arrives ends the process there at once, with a
 * message on stderr naming the id and the node, which fails the job (Regehr report, B.5); a
 * message for an id never set where it arrives stops that node, and its next blocking call
 * (iso_barrier, iso_deinit, read_iso_var32, ...) fails naming the id.
 * On failure returns NULL and sets iso_last_error(): a handler id out of range
 * (ISO_E_INVALID_ARGUMENT), a call inside a handler or after iso_deinit
 * (ISO_E_FAILED_PRECONDITION); nothing changes then. Never blocks. */
iso_handler* iso_set_handler(int handler_id, iso_handler* fn);

/* iso_send_msg: adds an isochronous message to the open isochron: `size` bytes from `data`
 * (copied now) reach handler `handler_id` on node `node` (which may be this node) at the
 * isochron's logical time. Never blocks.
 * Returns: ISO_SUCCESS; ISO_E_FAILED_PRECONDITION outside an isochron; ISO_E_NOT_FOUND when
 *   no handler was ever set under `handler_id` on this node; ISO_E_INVALID_ARGUMENT for a
 *   node or handler id (0 .. MAX_ISO_HANDLERS-1) out of range or NULL `data` with a nonzero `size`;
 *   ISO_E_OUT_OF_RANGE when `size` is above MAX_ISO_MSG_SIZE or the job's largest message
 *   (what one record of the NIC's queue holds, less headers); ISO_E_RESOURCE_EXHAUSTED when the
 * message would make the isochron too large for the NIC's queue. Either way the message is not
 * added and the isochron stays open. */
int iso_send_msg(int node, int handler_id, const void* data, size_t size);

/* ---- Errors ------------------------------------------------------------------------------ */

/* iso_last_error: the message of the latest failed call on this thread ("" if none has
 * failed), e.g. "iso_assign32: assign to address 9 without a sched: ...". Successful calls
 * leave it alone (as errno). The string stays valid until the next failing call on this
 * thread. Safe to call at any time, from any thread, and inside a handler. */
const char* iso_last_error(void);

/* ---- Classic names ----------------------------------------------------------------------- */
#ifndef ISO_NO_CLASSIC_MACROS
#define NODEID (iso_node_id())
#define NUMNODES (iso_node_count())
#define iso_assign iso_assign32
#define read_iso_var read_iso_var32
/* `struct iso_var`, the report's read handle, is `struct iso_var32`. */
#define iso_var iso_var32
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ISO_ISO_H_ */
