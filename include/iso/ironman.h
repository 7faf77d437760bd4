/* The Ironman isotach messaging-layer API (the v.2 API of the Ironman technical report,
 * appendix A and its headers noniso.h, isotach.h, iso_mbm.h and iso_smm.h), so that programs
 * written for it compile and run here. Plain C (C11) and C++; implemented on the C++ API
 * (iso/iso.hpp), which new code should use instead.
 *
 *   #include <iso/ironman.h>
 *   int main(void) {
 *     iso_mbm m;
 *     if (open_net() != SUCCESS) { fprintf(stderr, "%s\n", ironman_last_error()); return 1; }
 *     int next = (get_my_node_number() + 1) % get_number_of_hosts();
 *     while (iso_send(next, "hello", 6, TRUE) != SUCCESS) poll();
 *     while (iso_receive(&m) != SUCCESS) poll();
 *     printf("from %d: %s\n", m.info.msg.sender, (char *)m.info.msg.data);
 *     while (try_close_net() != SUCCESS) poll();
 *     return 0;
 *   }
 *
 * Run it as a job with `isorun -n 4 -- ./prog` (one node per process).
 *
 * This header and <iso/iso.h> (the Regehr API) cannot be used in one translation unit: the
 * two APIs give different meanings to iso_end, iso_sched, iso_barrier, iso_poll and more.
 * The report's names are macros over functions named ironman_*, so they do not clash at link
 * time either with the Regehr API or with the C library: send() here takes three arguments
 * and the socket send() four, and a program that needs both must #undef send after this
 * header (or define ISO_IRONMAN_NO_REPORT_NAMES, see the end). poll() is a macro for
 * iso_poll() as in the report's headers, so <poll.h>'s poll() cannot be called after this
 * header either.
 *
 * RESULTS. Every call returns SUCCESS (0) or FAILURE (1), as in the report; receive() and
 * iso_receive() return -1 when nothing is there to deliver. ironman_last_error() gives the
 * reason for the last FAILURE in words (precise: the bad argument, the call out of order,
 * the failed node). Nothing aborts on bad input, and nothing blocks except try_close_net()'s
 * last step and iso_retrieve().
 *
 * DEPARTURES FROM THE REPORT, and why:
 *  - open_net() takes no mode: there is one engine, and isotach and non-isotach traffic are
 *    always both available (the report's open_net(int mode) is chosen by header macros).
 *  - Message payloads are limited to get_max_payload() bytes, at most 65535 because the
 *    report's iso_msg carries a 16-bit length.
 *  - noniso_mbm always points to the data (msg.data_ptr), whatever its size, as the report's
 *    own code does; appendix A's inline form for 4 bytes or fewer is not used.
 *  - Barriers involve every node of the job: every node registers a barrier channel before
 *    any node starts a barrier on it, and every node takes part in every instance.
 *  - iso_register_barrier and iso_barrier take (channel, mode), the order of the report's
 *    isotach.h; appendix A lists (mode, channel).
 *  - Hosts have no names here (the nodes of a job share one host): get_node_number()
 *    answers -1. get_SIU_state() answers FALSE: the SIU is emulated, not hardware.
 *  - The shared memory model, designed in the report but never implemented there, is here:
 *    ISO_SMM_WORDS 32-bit words at addresses 0 .. ISO_SMM_WORDS-1, on every node, all 0 at
 *    start.
 *
 * THREADS. One node per process, used by one thread at a time.
 */
#ifndef ISO_IRONMAN_H_
#define ISO_IRONMAN_H_

#ifdef ISO_ISO_H_
#error "<iso/ironman.h> and <iso/iso.h> are two APIs with clashing names; include one"
#endif

#ifdef __cplusplus
extern "C" {
#endif

#ifndef SUCCESS
#define SUCCESS 0
#endif
#ifndef FAILURE
#define FAILURE 1
#endif
#ifndef TRUE
#define TRUE 1
#endif
#ifndef FALSE
#define FALSE 0
#endif

/* ---- Initialisation and shut-down (A.1) ---------------------------------------------- */

/* Joins the job and waits until every node has joined. Must come before any other call.
 * FAILURE: called twice, or the job cannot start (the reason in ironman_last_error()). */
int ironman_open_net(void);

/* Leaves the job. Call it repeatedly, receiving meanwhile, until it returns SUCCESS: that
 * happens once every node has called it and every isotach message sent before has been
 * delivered (a STRONG isotach barrier), after which the node has left and no call but
 * ironman_last_error() may follow. The last call blocks briefly while the nodes part. */
int ironman_try_close_net(void);

/* ---- Housekeeping and status (A.2) -------------------------------------------------- */

/* Hands the messaging layer control. SUCCESS when something is waiting to be received
 * (receive() or iso_receive() would deliver), -1 when nothing is, FAILURE on error. */
int ironman_poll(void);

int ironman_get_node_number(const char* hostname); /* always -1: see above */
int ironman_get_my_node_number(void);              /* -1 before open_net() */
int ironman_get_number_of_hosts(void);             /* -1 before open_net() */
int ironman_get_max_payload(void);                 /* bytes; -1 before open_net() */
int ironman_get_MBM_ver(void);                     /* 2: isotach ordering and self-messages */
int ironman_get_SIU_state(void);                   /* FALSE: the SIU is emulated */

/* The reason for the calling thread's last FAILURE ("" if none); valid until its next call. */
const char* ironman_last_error(void);

/* ---- Non-isotach messages (A.3) ----------------------------------------------------- */

typedef struct {
  int sender_id; /* the node that sent it */
  int size;      /* bytes at msg.data_ptr */
  union msg_tag {
    void* data_ptr; /* valid until the next receive() or try_close_net() */
    int data;
  } msg;
} noniso_mbm;

/* Sends `size` bytes to node `target`, FIFO per pair of nodes; `data` may be reused at once.
 * FAILURE: target is this node (no self-messages without isotach) or no node, data is NULL
 * with size > 0, size is negative or above get_max_payload(). */
int ironman_send(int target, const void* data, int size);

/* The next message, without blocking: SUCCESS, or -1 if none has arrived, FAILURE on error.
 * The message's bytes stay valid until the next receive(). */
int ironman_receive(noniso_mbm* m);

/* ---- Non-isotach barrier (A.4) ------------------------------------------------------ */

/* Starts this node's part of the next barrier of all nodes. FAILURE while this node's
 * previous barrier has not completed (barrier_completed() has not returned SUCCESS). */
int ironman_initiate_barrier(void);
/* SUCCESS once every node has started the barrier (then it is over: the next call answers
 * FAILURE until a new barrier is started); FAILURE while it is not complete or none is. */
int ironman_barrier_completed(void);

/* ---- Isotach messages (A.5, A.7) ---------------------------------------------------- */

/* Tags of an iso_mbm: an isotach message, or a barrier/signal notice. */
#define ISO_MBM 0x10
#define BS_MARKER 0x16

typedef struct {
  unsigned short sender; /* the node that sent it */
  unsigned short length; /* bytes at data */
  void* data;            /* valid until the next iso_receive() or try_close_net() */
} iso_msg;

typedef struct {
  unsigned char tag; /* ISO_MBM or BS_MARKER */
  union {
    unsigned char bits; /* BS_MARKER: ISO_SIGNAL_BIT(c) and ISO_BARRIER_BIT(c) of what fired */
    iso_msg msg;        /* ISO_MBM */
  } info;
} iso_mbm;

/* Adds an isotach message for `target` (this node included) to the isochron being issued,
 * opening one if none is; with last_in_isochron TRUE it then ends the isochron, as
 * iso_end() does. Everything in one isochron is delivered at one logical time everywhere.
 * FAILURE (adding nothing): a bad target, data NULL with size > 0, size negative or above
 * get_max_payload(), or ending the isochron failed. */
int ironman_iso_send(int target, const void* data, int size, int last_in_isochron);

/* Ends the isochron being issued; SUCCESS and nothing else when none is open. */
int ironman_iso_end(void);

/* The next isotach message or barrier/signal notice, in isotach order, without blocking:
 * SUCCESS, -1 if none is there, FAILURE on error. Signals are delivered only on channels
 * this node registered; barrier notices on the barrier channels (0 and 1). */
int ironman_iso_receive(iso_mbm* m);

/* ---- Isotach shared memory (A.6) ---------------------------------------------------- */

#define ISO_SMM_WORDS 65536u
typedef unsigned long shmem_addr_t;

/* The local variable a read's value arrives in. Initialise with ISO_VAR32_INIT; do not
 * touch its fields. */
typedef struct iso_var32 {
  long value;
  unsigned int slot;
  unsigned int state;
} iso_var32;
#define ISO_VAR32_INIT \
  { 0, 0, 0 }
#define isovar iso_var32 /* appendix A's spelling of the type in iso_read() */

/* Adds a read of word `shaddr` to the isochron being issued (opening one if none is); its
 * value arrives in `laddr`, fetched with iso_retrieve(). FAILURE: shaddr out of range,
 * laddr NULL. A read already pending in laddr is forgotten. */
int ironman_iso_read(shmem_addr_t shaddr, iso_var32* laddr, int last_in_isochron);
/* Blocks (polling) until the last iso_read() into `laddr` has its value, and returns it.
 * Returns 0 and sets ironman_last_error() when laddr holds no read, when its isochron is
 * still open (end it first), or when the job failed. */
long ironman_iso_retrieve(iso_var32* laddr);

/* A write: sched and assign of word `shaddr` in one step. */
int ironman_iso_write(shmem_addr_t shaddr, long val, int last_in_isochron);
/* Reserves word `shaddr`: reads after it in logical time wait for this node's assign.
 * FAILURE when this node already has an outstanding sched on it. */
int ironman_iso_sched(shmem_addr_t shaddr, int last_in_isochron);
/* Gives the value for this node's outstanding sched on `shaddr`. FAILURE without one. */
int ironman_iso_assign(shmem_addr_t shaddr, long val, int last_in_isochron);

/* ---- Isotach signals and barriers (A.8) --------------------------------------------- */

#define ISO_BARRIER_WEAK 0
#define ISO_BARRIER_STRONG 1
#define WEAK ISO_BARRIER_WEAK
#define STRONG ISO_BARRIER_STRONG
/* Bits of a BS_MARKER notice's info.bits. */
#define ISO_SIGNAL_BIT(channel) (1u << (channel))        /* signal channels 1..5 */
#define ISO_BARRIER_BIT(channel) (1u << (6 + (channel))) /* barrier channels 0..1 */

/* Claims signal channel 1..5 for this node: it may send on it, and receives its notices.
 * FAILURE for another channel. */
int ironman_iso_register_signal(int channel);
/* Releases it; nothing happens for a channel not registered. FAILURE out of 1..5. */
int ironman_iso_clear_signal(int channel);
/* Signals `channel` to every node that registered it, in an isochron of its own. FAILURE:
 * not registered here, or inside an isochron. */
int ironman_iso_send_signal(int channel);

/* Claims barrier channel 0..1 in `mode` (ISO_BARRIER_WEAK or ISO_BARRIER_STRONG). FAILURE:
 * a bad channel or mode, or the channel is registered already. */
int ironman_iso_register_barrier(int channel, unsigned char mode);
/* Releases it; nothing happens for a channel not registered. FAILURE out of 0..1. */
int ironman_iso_clear_barrier(int channel);
/* Starts this node's part of the next barrier on `channel`, without blocking; completion
 * arrives as a BS_MARKER notice with ISO_BARRIER_BIT(channel), at one logical time on every
 * node. WEAK: every node has started it; STRONG: also, every isotach message sent before
 * starting it has been delivered here first. FAILURE: the channel is not registered, or in
 * another mode, an isochron is open, or this node's previous barrier on the channel has not
 * completed. */
int ironman_iso_barrier(int channel, unsigned char mode);

/* ---- The report's names ------------------------------------------------------------ */

/* Define ISO_IRONMAN_NO_REPORT_NAMES before this header to call the ironman_* functions by
 * their own names only (for code that also needs the C library's send() or poll()). */
#ifndef ISO_IRONMAN_NO_REPORT_NAMES
#define open_net() ironman_open_net()
#define try_close_net() ironman_try_close_net()
#define iso_poll() ironman_poll()
#define noniso_poll() ironman_poll()
#define poll() ironman_poll()
#define get_node_number(hostname) ironman_get_node_number(hostname)
#define get_my_node_number() ironman_get_my_node_number()
#define get_number_of_hosts() ironman_get_number_of_hosts()
#define get_max_payload() ironman_get_max_payload()
#define get_MBM_ver() ironman_get_MBM_ver()
#define get_SIU_state() ironman_get_SIU_state()
#define send(target, data, size) ironman_send(target, data, size)
#define receive(m) ironman_receive(m)
#define initiate_barrier() ironman_initiate_barrier()
#define barrier_completed() ironman_barrier_completed()
#define iso_send(target, data, size, last) ironman_iso_send(target, data, size, last)
#define iso_end() ironman_iso_end()
#define iso_receive(m) ironman_iso_receive(m)
#define iso_read(shaddr, laddr, last) ironman_iso_read(shaddr, laddr, last)
#define iso_retrieve(laddr) ironman_iso_retrieve(laddr)
#define iso_write(shaddr, val, last) ironman_iso_write(shaddr, val, last)
#define iso_sched(shaddr, last) ironman_iso_sched(shaddr, last)
#define iso_assign(shaddr, val, last) ironman_iso_assign(shaddr, val, last)
#define iso_register_signal(channel) ironman_iso_register_signal(channel)
#define iso_clear_signal(channel) ironman_iso_clear_signal(channel)
#define iso_send_signal(channel) ironman_iso_send_signal(channel)
#define iso_register_barrier(channel, mode) ironman_iso_register_barrier(channel, mode)
#define iso_clear_barrier(channel) ironman_iso_clear_barrier(channel)
#define iso_barrier(channel, mode) ironman_iso_barrier(channel, mode)
#endif

#ifdef __cplusplus
}
#endif

#endif /* ISO_IRONMAN_H_ */
