/* The Ironman C API (iso/ironman.h) between real processes, in C: every group of calls,
 * with outcomes checked (order of delivery, atomicity of sched/assign, agreement of the
 * isotach order across nodes) and misuse answered by FAILURE with a reason. Run by ctest
 * through isorun on 3 nodes; each node prints "ironman test: OK" or FAILED lines. */
#include <iso/ironman.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                                               \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      printf("node %d: FAILED at line %d: %s (last error: %s)\n", get_my_node_number(), __LINE__, \
             #cond, ironman_last_error());                                                        \
      failures++;                                                                                 \
    }                                                                                             \
  } while (0)

/* Checks that a call failed and said something about why. */
#define CHECK_FAILS(call)                   \
  do {                                      \
    CHECK((call) == FAILURE);               \
    CHECK(ironman_last_error()[0] != '\0'); \
  } while (0)

enum { kMessages = 40, kRounds = 30, kIncrements = 25 };

struct tagged {
  int32_t sender;
  int32_t sequence;
};

static int nodes;
static int me;

static void wait_for_noniso_barrier(void) {
  CHECK(initiate_barrier() == SUCCESS);
  CHECK_FAILS(initiate_barrier()); /* the previous one is not complete */
  while (barrier_completed() != SUCCESS) poll();
  CHECK_FAILS(barrier_completed()); /* over: none is running */
}

/* Waits for the next notice of the isotach queue. */
static void next_iso(iso_mbm* m) {
  while (iso_receive(m) != SUCCESS) poll();
}

static void wait_for_barrier(int channel) {
  iso_mbm m;
  CHECK(iso_barrier(channel, ISO_BARRIER_STRONG) == SUCCESS);
  CHECK_FAILS(iso_barrier(channel, ISO_BARRIER_STRONG)); /* not complete yet */
  next_iso(&m);
  CHECK(m.tag == BS_MARKER && m.info.bits == ISO_BARRIER_BIT(channel));
}

static void test_status(void) {
  CHECK(nodes == 3);
  CHECK(me >= 0 && me < nodes);
  CHECK(get_max_payload() > 1000 && get_max_payload() <= 65535);
  CHECK(get_MBM_ver() == 2);
  CHECK(get_SIU_state() == FALSE);
  CHECK(get_node_number("localhost") == -1);
  CHECK_FAILS(open_net()); /* once */
}

static void test_plain_messages(void) {
  char big[70000];
  struct tagged out;
  int next[8] = {0};
  int received = 0;
  noniso_mbm m;
  memset(big, 0, sizeof big);
  CHECK_FAILS(send(me, "x", 1));    /* no non-isotach message to oneself */
  CHECK_FAILS(send(nodes, "x", 1)); /* no such node */
  CHECK_FAILS(send((me + 1) % nodes, big, get_max_payload() + 1));
  CHECK_FAILS(send((me + 1) % nodes, NULL, 4));
  CHECK_FAILS(receive(NULL));
  for (int s = 0; s < kMessages; ++s) {
    for (int to = 0; to < nodes; ++to) {
      if (to == me) continue;
      out.sender = me;
      out.sequence = s;
      CHECK(send(to, &out, sizeof out) == SUCCESS);
    }
  }
  while (received < kMessages * (nodes - 1)) {
    if (receive(&m) != SUCCESS) {
      poll();
      continue;
    }
    struct tagged in;
    CHECK(m.size == (int)sizeof in);
    memcpy(&in, m.msg.data_ptr, sizeof in);
    CHECK(in.sender == m.sender_id && in.sender != me);
    CHECK(in.sequence == next[in.sender]); /* FIFO per sender */
    next[in.sender] = in.sequence + 1;
    received++;
  }
  CHECK(receive(&m) == -1); /* nothing more */
}

/* Every node sends kRounds isochrons, each with one message to every node (itself too).
 * Every node must receive the same isochrons in the same order, each one's messages
 * together: the hash of the delivery order goes into shared memory for node 0 to compare. */
static void test_isotach_order(void) {
  char big[70000];
  iso_mbm m;
  uint64_t hash = 1469598103934665603u;
  memset(big, 0, sizeof big);
  CHECK_FAILS(iso_send(nodes, "x", 1, TRUE));
  CHECK_FAILS(iso_send(me, big, get_max_payload() + 1, TRUE));
  CHECK_FAILS(iso_receive(NULL));
  CHECK(iso_end() == SUCCESS); /* none open: nothing happens */
  for (int r = 0; r < kRounds; ++r) {
    struct tagged out = {me, r};
    for (int to = 0; to < nodes; ++to) {
      CHECK(iso_send(to, &out, sizeof out, to == nodes - 1) == SUCCESS);
    }
  }
  for (int got = 0; got < kRounds * nodes; ++got) {
    struct tagged in;
    next_iso(&m);
    CHECK(m.tag == ISO_MBM && m.info.msg.length == sizeof in);
    memcpy(&in, m.info.msg.data, sizeof in);
    CHECK(in.sender == m.info.msg.sender);
    hash = (hash ^ (uint64_t)(in.sender * 1000 + in.sequence)) * 1099511628211u;
  }
  CHECK(iso_write(100 + me, (long)(hash & 0x7fffffff), TRUE) == SUCCESS);
  wait_for_barrier(0);
  if (me == 0) {
    iso_var32 v[8];
    for (int n = 0; n < nodes; ++n) {
      v[n] = (iso_var32)ISO_VAR32_INIT;
      CHECK(iso_read(100 + n, &v[n], n == nodes - 1) == SUCCESS);
    }
    for (int n = 1; n < nodes; ++n) CHECK(iso_retrieve(&v[n]) == iso_retrieve(&v[0]));
  }
}

/* A shared counter: read + sched, then assign, by every node; it must end exact. */
static void test_shared_memory(void) {
  iso_var32 v = ISO_VAR32_INIT;
  iso_var32 never = ISO_VAR32_INIT;
  CHECK_FAILS(iso_assign(7, 1, TRUE)); /* no sched */
  CHECK_FAILS(iso_read(ISO_SMM_WORDS, &v, TRUE));
  CHECK_FAILS(iso_write(ISO_SMM_WORDS + 5, 1, TRUE));
  CHECK_FAILS(iso_read(0, NULL, TRUE));
  CHECK(iso_retrieve(&never) == 0 && ironman_last_error()[0] != '\0');
  CHECK(iso_read(0, &v, FALSE) == SUCCESS);
  CHECK(iso_retrieve(&v) == 0 && ironman_last_error()[0] != '\0'); /* isochron still open */
  CHECK(iso_end() == SUCCESS);
  for (int i = 0; i < kIncrements; ++i) {
    CHECK(iso_read(0, &v, FALSE) == SUCCESS);
    CHECK(iso_sched(0, TRUE) == SUCCESS);
    const long old = iso_retrieve(&v);
    CHECK_FAILS(iso_sched(0, TRUE)); /* one outstanding sched per variable */
    CHECK(iso_assign(0, old + 1, TRUE) == SUCCESS);
  }
  CHECK(iso_write(200 + me, -5 - me, TRUE) == SUCCESS); /* signed values come back signed */
  wait_for_barrier(0);
  CHECK(iso_read(0, &v, TRUE) == SUCCESS);
  CHECK(iso_retrieve(&v) == (long)kIncrements * nodes);
  CHECK(iso_read(200 + (me + 1) % nodes, &v, TRUE) == SUCCESS);
  CHECK(iso_retrieve(&v) == -5 - (me + 1) % nodes);
}

static void test_signals_and_barriers(void) {
  iso_mbm m;
  CHECK_FAILS(iso_register_signal(0)); /* the reset signal is not the application's */
  CHECK_FAILS(iso_register_signal(6));
  CHECK_FAILS(iso_send_signal(3)); /* not registered */
  CHECK(iso_clear_signal(3) == SUCCESS);
  CHECK_FAILS(iso_register_barrier(2, ISO_BARRIER_WEAK));
  CHECK_FAILS(iso_register_barrier(1, 7));
  CHECK_FAILS(iso_register_barrier(0, ISO_BARRIER_WEAK)); /* registered STRONG already */
  CHECK_FAILS(iso_barrier(0, ISO_BARRIER_WEAK));          /* in another mode */
  CHECK_FAILS(iso_barrier(1, ISO_BARRIER_WEAK));          /* not registered */
  CHECK(iso_send(me, "x", 1, FALSE) == SUCCESS);
  CHECK_FAILS(iso_barrier(0, ISO_BARRIER_STRONG)); /* inside an isochron */
  CHECK_FAILS(iso_send_signal(2));
  CHECK(iso_end() == SUCCESS);
  /* Registered on every node before the non-isotach barrier in main(). Node 0's signal and
   * this node's message to itself come in either order (they are unrelated isochrons). */
  if (me == 0) CHECK(iso_send_signal(2) == SUCCESS);
  int message = 0, signal = 0;
  while (message + signal < 2) {
    next_iso(&m);
    if (m.tag == ISO_MBM) {
      CHECK(m.info.msg.length == 1 && m.info.msg.sender == me && !message);
      message = 1;
    } else {
      CHECK(m.tag == BS_MARKER && m.info.bits == ISO_SIGNAL_BIT(2) && !signal);
      signal = 1;
    }
  }
  CHECK(iso_clear_signal(2) == SUCCESS);
  CHECK(iso_register_barrier(1, ISO_BARRIER_WEAK) == SUCCESS);
  CHECK(iso_barrier(1, ISO_BARRIER_WEAK) == SUCCESS);
  next_iso(&m);
  CHECK(m.tag == BS_MARKER && m.info.bits == ISO_BARRIER_BIT(1));
  CHECK(iso_clear_barrier(1) == SUCCESS);
  CHECK_FAILS(iso_barrier(1, ISO_BARRIER_WEAK)); /* cleared */
}

int main(void) {
  CHECK(get_my_node_number() == -1);
  CHECK_FAILS(send(0, "x", 1)); /* before open_net */
  if (open_net() != SUCCESS) {
    printf("FAILED: open_net: %s\n", ironman_last_error());
    return 1;
  }
  nodes = get_number_of_hosts();
  me = get_my_node_number();
  CHECK(iso_register_signal(2) == SUCCESS);
  CHECK(iso_register_barrier(0, ISO_BARRIER_STRONG) == SUCCESS);
  test_status();
  wait_for_noniso_barrier(); /* every node has registered */
  test_plain_messages();
  test_isotach_order();
  test_shared_memory();
  test_signals_and_barriers();
  while (try_close_net() != SUCCESS) poll();
  CHECK_FAILS(poll()); /* closed */
  if (failures == 0) printf("node %d: ironman test: OK\n", me);
  return failures == 0 ? 0 : 1;
}
