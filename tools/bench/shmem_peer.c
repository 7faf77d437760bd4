// iso-shmem-peer: the OpenSHMEM figures that our isotach benchmarks print beside their own.
//
// Run it through tools/bench/run_shmem_peer.sh, the interface the drivers use, which starts
//   oshrun -n 2 --bind-to core --map-by core --mca opal_common_ucx_opal_mem_hooks 0
//          -x UCX_TLS=sm,self iso-shmem-peer [--quick]
// (or -n 4, two PEs to a core, for the oversubscribed figures). PE 0 measures and prints;
// the other PEs only hold the symmetric data and wait for the end. Each line is
// "name [k] median min max", in microseconds per operation, over 9 repetitions (3 with
// --quick) of a loop sized to last about 20 ms (2 ms with --quick).
//
// The single-variable figures go to PE 1. The four-variable ones, the counterparts of an
// isochron of 4 operations, keep variable i on PE i % npes (with 2 PEs two of them are PE
// 0's own) and make the 4 operations atomic the OpenSHMEM way, under one global lock:
//   shmem_lock_fadd4_us  set_lock, 4 fetch-adds, quiet, clear_lock (a read-modify-write)
//   shmem_lock_put4_us   set_lock, 4 puts, quiet, clear_lock (a blind write)
//
// Then every PE updates at once, the same number of times, as a counter or a reservation
// that every process updates is used; PE 0 times its own updates:
//   shmem_atomic_fadd_all_us  shmem_atomic_fetch_add on PE 1, by every PE at once
//   shmem_lock_fadd4_all_us   set_lock, 4 fetch-adds, quiet, clear_lock, by every PE at once
//
// With --sizes it also times shmem_getmem, and shmem_putmem + shmem_quiet, of 8, 64, 512,
// 4096, 32768 and 65536 bytes to PE 1 ("shmem_getmem_us <bytes> ...",
// "shmem_putmem_quiet_us <bytes> ...", for order-bench).
//
// The crash in shmem_finalize (Debian 12: Open MPI 4.1.4, UCX 1.13.1). Without options every
// PE segfaults there, 20 runs of 20. gdb shows ompi_mpi_finalize -> ompi_osc_base_finalize ->
// osc/rdma calls free() -> opal_mem_hooks_release_hook calls the release callback that
// libmca_common_ucx registered, but that library was already unloaded with the UCX components.
// "--mca opal_common_ucx_opal_mem_hooks 0" keeps the callback from being registered at all
// (UCX still has its own memory hooks) and gives 40 clean exits of 40 with no cost in latency.
// "--mca osc ^rdma" also worked (15 of 15), but only by removing the one free() that comes
// after the unload. Tried without effect: mca_base_component_disable_dlclose 1, UCX_TLS=sm,self
// alone, sshmem mmap, spml ucx, pml ob1. As another build may crash again, every line is
// printed and flushed as soon as it is measured, and the script keeps the lines whatever the
// exit status. The latency settings, with their numbers, are in run_shmem_peer.sh.
//
// The data lives on the symmetric heap (shmem_align), not in static variables. UCX can map
// another PE's heap, so a get or put is a copy and an atomic a CPU atomic; a static variable
// cannot be mapped, UCX emulates its accesses with messages served in PE 1's process, and a
// get then takes about 0.7 us instead of 0.08 us. So do "--mca sshmem mmap" or "sysv" heaps.

// clock_gettime and CLOCK_MONOTONIC are POSIX, not C11.
#define _POSIX_C_SOURCE 199309L

#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
  measurer_pe = 0,
  target_pe = 1,
  cache_line = 64,
  max_k = 32,
  max_pes = 8,
  full_reps = 9,
  quick_reps = 3,
  max_block = 65536,  // the largest --sizes transfer
};

// PE 1 stores this before the first get, so that the gets can be checked.
static const long read_value_seed = 4242;

// Each variable on its own cache line: k puts then touch k independent lines, which is what
// k writes to different shared variables cost, not one line written k times.
struct padded_long {
  long value;
  char pad[cache_line - sizeof(long)];
};

struct sym_area {
  struct padded_long read_value;
  struct padded_long write_value;
  struct padded_long counter;
  struct padded_long counter_all;  // incremented by every PE at once
  struct padded_long quad_all[4];  // the four-variable fetch-adds by every PE at once
  struct padded_long done;
  struct padded_long slots[max_k];
  struct padded_long lock;         // shmem_set_lock's word: zero before first use
  struct padded_long quad[4];      // the four-variable fetch-adds' counters
  struct padded_long quad_put[4];  // the four-variable puts' targets
  char block[max_block];           // --sizes: what getmem reads and putmem writes
};

struct run_config {
  int sizes;  // also the sized getmem and putmem figures
  int reps;
  double warm_ns;    // the warm-up runs at least this long; its last loop sizes the repetitions
  double target_ns;  // how long one timed repetition should last
  long all_iters;    // each PE's increments per repetition of shmem_atomic_fadd_all_us
};

struct summary {
  double median_us;
  double min_us;
  double max_us;
  long total_ops;  // warm-up included: what PE 1's counter must show after the atomics
  long rep_iters;  // iterations per repetition: the last value that a put loop stored
};

// Runs iters operations of one kind; only the batched puts use k.
typedef void (*op_loop)(struct sym_area* area, long iters, int k);

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

// How many PEs run; variable i of the four-variable figures lives on PE i % n_pes.
static int n_pes = 2;

// Keeps the fetched values observable, so that no part of a loop can be elided.
static volatile long sink;

static void loop_get(struct sym_area* area, long iters, int k) {
  (void)k;
  long sum = 0;
  for (long i = 0; i < iters; ++i) sum += shmem_long_g(&area->read_value.value, target_pe);
  sink = sum;
}

static void loop_put_quiet(struct sym_area* area, long iters, int k) {
  (void)k;
  for (long i = 0; i < iters; ++i) {
    shmem_long_p(&area->write_value.value, i, target_pe);
    shmem_quiet();
  }
}

static void loop_put_k_quiet(struct sym_area* area, long iters, int k) {
  for (long i = 0; i < iters; ++i) {
    for (int s = 0; s < k; ++s) shmem_long_p(&area->slots[s].value, i, target_pe);
    shmem_quiet();
  }
}

// The sized loops use k as the transfer's size in bytes; the local side is a private buffer.
static char local_block[max_block];

static void loop_getmem(struct sym_area* area, long iters, int k) {
  for (long i = 0; i < iters; ++i) shmem_getmem(local_block, area->block, (size_t)k, target_pe);
  sink = local_block[0];
}

static void loop_putmem_quiet(struct sym_area* area, long iters, int k) {
  for (long i = 0; i < iters; ++i) {
    memcpy(local_block, &i, sizeof i);  // each put carries its iteration, checked after
    shmem_putmem(area->block, local_block, (size_t)k, target_pe);
    shmem_quiet();
  }
}

static long fetch_add(long* target, long value, int pe) {
#if SHMEM_MAJOR_VERSION > 1 || (SHMEM_MAJOR_VERSION == 1 && SHMEM_MINOR_VERSION >= 4)
  return shmem_long_atomic_fetch_add(target, value, pe);
#else
  return shmem_long_fadd(target, value, pe);  // the name before OpenSHMEM 1.4
#endif
}

static void loop_fetch_add(struct sym_area* area, long iters, int k) {
  (void)k;
  long sum = 0;
  for (long i = 0; i < iters; ++i) sum += fetch_add(&area->counter.value, 1, target_pe);
  sink = sum;
}

static void lock_fetch_add4(struct sym_area* area, struct padded_long* quad, long iters) {
  long sum = 0;
  for (long i = 0; i < iters; ++i) {
    shmem_set_lock(&area->lock.value);
    for (int v = 0; v < 4; ++v) sum += fetch_add(&quad[v].value, 1, v % n_pes);
    shmem_quiet();
    shmem_clear_lock(&area->lock.value);
  }
  sink = sum;
}

static void loop_lock_fetch_add4(struct sym_area* area, long iters, int k) {
  (void)k;
  lock_fetch_add4(area, area->quad, iters);
}

static void loop_lock_put4(struct sym_area* area, long iters, int k) {
  (void)k;
  for (long i = 0; i < iters; ++i) {
    shmem_set_lock(&area->lock.value);
    for (int v = 0; v < 4; ++v) shmem_long_p(&area->quad_put[v].value, i, v % n_pes);
    shmem_quiet();
    shmem_clear_lock(&area->lock.value);
  }
}

static double time_loop_ns(op_loop loop, struct sym_area* area, long iters, int k) {
  double start = now_ns();
  loop(area, iters, k);
  return now_ns() - start;
}

static int compare_doubles(const void* a, const void* b) {
  double x = *(const double*)a;
  double y = *(const double*)b;
  return (x > y) - (x < y);
}

// Warms up by doubling the loop until one lasts warm_ns, then sizes each repetition from the
// cost per operation of that last warm-up loop.
static void measure(op_loop loop, struct sym_area* area, int k, const struct run_config* cfg,
                    struct summary* out) {
  long total = 0;
  long iters = 16;
  double elapsed = 0;
  for (;;) {
    elapsed = time_loop_ns(loop, area, iters, k);
    total += iters;
    if (elapsed >= cfg->warm_ns || iters > (1L << 40)) break;
    iters *= 2;
  }
  double per_op_ns = elapsed / (double)iters;
  long rep_iters = (long)(cfg->target_ns / (per_op_ns > 1.0 ? per_op_ns : 1.0));
  if (rep_iters < 1) rep_iters = 1;

  double per_op_us[full_reps];
  for (int r = 0; r < cfg->reps; ++r) {
    per_op_us[r] = time_loop_ns(loop, area, rep_iters, k) / (double)rep_iters / 1e3;
    total += rep_iters;
  }
  qsort(per_op_us, (size_t)cfg->reps, sizeof per_op_us[0], compare_doubles);
  *out = (struct summary){.median_us = per_op_us[cfg->reps / 2],
                          .min_us = per_op_us[0],
                          .max_us = per_op_us[cfg->reps - 1],
                          .total_ops = total,
                          .rep_iters = rep_iters};
}

// A figure is printed only when the target PEs' memory shows that the operations really happened,
// so that a transport dropping them cannot yield a flattering number. The line is flushed at once:
// shmem_finalize has crashed on this installation, and the driver keeps what came out.
static int report(int verified, const char* name, int k, const struct summary* s) {
  if (!verified) {
    fprintf(stderr,
            "iso-shmem-peer: %s not reported: a target PE does not hold the expected value\n",
            name);
    return 0;
  }
  if (k > 0) {
    printf("%s %d %.4f %.4f %.4f\n", name, k, s->median_us, s->min_us, s->max_us);
  } else {
    printf("%s %.4f %.4f %.4f\n", name, s->median_us, s->min_us, s->max_us);
  }
  fflush(stdout);
  return 1;
}

static long read_target(long* variable) { return shmem_long_g(variable, target_pe); }

// Whether each of the four variables of `quad`, on its own PE, holds `expected`.
static int quad_holds(struct padded_long* quad, long expected) {
  int ok = 1;
  for (int v = 0; v < 4; ++v) ok &= shmem_long_g(&quad[v].value, v % n_pes) == expected;
  return ok;
}

// PE 0's whole job. Returns 1 when every figure was verified and printed.
static int run_measurements(struct sym_area* area, const struct run_config* cfg) {
  int ok = 1;
  struct summary s;

  measure(loop_get, area, 0, cfg, &s);
  ok &= report(read_target(&area->read_value.value) == read_value_seed, "shmem_g_us", 0, &s);

  measure(loop_put_quiet, area, 0, cfg, &s);
  ok &= report(read_target(&area->write_value.value) == s.rep_iters - 1, "shmem_p_quiet_us", 0, &s);

  for (int k = 1; k <= max_k; k *= 2) {
    measure(loop_put_k_quiet, area, k, cfg, &s);
    ok &= report(read_target(&area->slots[k - 1].value) == s.rep_iters - 1, "shmem_p_quiet_k_us", k,
                 &s);
  }

  measure(loop_fetch_add, area, 0, cfg, &s);
  ok &= report(read_target(&area->counter.value) == s.total_ops, "shmem_atomic_fadd_us", 0, &s);

  measure(loop_lock_fetch_add4, area, 0, cfg, &s);
  ok &= report(quad_holds(area->quad, s.total_ops), "shmem_lock_fadd4_us", 0, &s);

  measure(loop_lock_put4, area, 0, cfg, &s);
  ok &= report(quad_holds(area->quad_put, s.rep_iters - 1), "shmem_lock_put4_us", 0, &s);

  static const int block_sizes[] = {8, 64, 512, 4096, 32768, max_block};
  for (size_t b = 0; cfg->sizes && b < sizeof block_sizes / sizeof block_sizes[0]; ++b) {
    const int bytes = block_sizes[b];
    long seen = 0;
    measure(loop_getmem, area, bytes, cfg, &s);
    ok &= report(1, "shmem_getmem_us", bytes, &s);
    measure(loop_putmem_quiet, area, bytes, cfg, &s);
    shmem_getmem(&seen, area->block, sizeof seen, target_pe);
    ok &= report(seen == s.rep_iters - 1, "shmem_putmem_quiet_us", bytes, &s);
  }
  return ok;
}

// The values PE 0 fetched in shmem_atomic_fadd_all_us must rise.
static long all_previous = -1;
static int all_rising = 1;

static void loop_fetch_add_all(struct sym_area* area, long iters, int k) {
  (void)k;
  for (long i = 0; i < iters; ++i) {
    long old = fetch_add(&area->counter_all.value, 1, target_pe);
    all_rising &= old > all_previous;
    all_previous = old;
  }
}

static void loop_lock_fetch_add4_all(struct sym_area* area, long iters, int k) {
  (void)k;
  lock_fetch_add4(area, area->quad_all, iters);
}

// Every PE runs `loop` `iters` times per repetition, all at once; PE 0 times its own and
// gets the summary.
static void measure_every_pe(op_loop loop, struct sym_area* area, long iters,
                             const struct run_config* cfg, struct summary* out) {
  double per_op_us[full_reps];
  for (int r = 0; r < cfg->reps; ++r) {
    shmem_barrier_all();
    per_op_us[r] = time_loop_ns(loop, area, iters, 0) / (double)iters / 1e3;
  }
  shmem_barrier_all();
  qsort(per_op_us, (size_t)cfg->reps, sizeof per_op_us[0], compare_doubles);
  *out = (struct summary){.median_us = per_op_us[cfg->reps / 2],
                          .min_us = per_op_us[0],
                          .max_us = per_op_us[cfg->reps - 1],
                          .total_ops = (long)n_pes * iters * cfg->reps,
                          .rep_iters = iters};
}

// Every PE's part of the figures of every PE at once; only PE 0 reports. Returns 1 unless
// one of PE 0's figures could not be verified.
static int run_every_pe(struct sym_area* area, const struct run_config* cfg, int me) {
  struct summary s;
  int ok = 1;
  measure_every_pe(loop_fetch_add_all, area, cfg->all_iters, cfg, &s);
  if (me == measurer_pe) {
    ok &= report(all_rising && read_target(&area->counter_all.value) == s.total_ops,
                 "shmem_atomic_fadd_all_us", 0, &s);
  }
  // A lock passed between PEs costs microseconds, not tens of nanoseconds.
  measure_every_pe(loop_lock_fetch_add4_all, area, cfg->all_iters / 100, cfg, &s);
  if (me == measurer_pe) {
    ok &= report(quad_holds(area->quad_all, s.total_ops), "shmem_lock_fadd4_all_us", 0, &s);
  }
  return ok;
}

static int parse_args(int argc, char** argv, struct run_config* cfg) {
  *cfg = (struct run_config){
      .sizes = 0, .reps = full_reps, .warm_ns = 20e6, .target_ns = 20e6, .all_iters = 1000000};
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--sizes") == 0) {
      cfg->sizes = 1;
      continue;
    }
    if (strcmp(argv[i], "--quick") != 0) return 0;
    cfg->reps = quick_reps;
    cfg->warm_ns = 2e6;
    cfg->target_ns = 2e6;
    cfg->all_iters = 100000;
  }
  return 1;
}

int main(int argc, char** argv) {
  struct run_config cfg;
  int args_ok = parse_args(argc, argv, &cfg);

  shmem_init();
  int me = shmem_my_pe();
  n_pes = shmem_n_pes();
  if (!args_ok || n_pes < 2 || n_pes > max_pes) {
    if (me == measurer_pe) {
      fprintf(stderr, "usage: oshrun -n 2..8 iso-shmem-peer [--quick] [--sizes]\n");
    }
    shmem_finalize();
    return 2;
  }

  struct sym_area* area = shmem_align(cache_line, sizeof *area);
  if (area == NULL) {
    if (me == measurer_pe) fprintf(stderr, "iso-shmem-peer: shmem_align failed\n");
    shmem_global_exit(1);
    return 1;
  }
  memset(area, 0, sizeof *area);
  area->read_value.value = read_value_seed;
  shmem_barrier_all();

  int ok = 1;
  if (me == measurer_pe) {
    ok = run_measurements(area, &cfg);
    for (int pe = 0; pe < n_pes; ++pe) {
      if (pe != measurer_pe) shmem_long_p(&area->done.value, 1, pe);
    }
    shmem_quiet();
  } else {
    // Waiting on one local word keeps the other PEs off PE 0's path; a barrier would drive the
    // collective machinery for the whole run.
    shmem_long_wait_until(&area->done.value, SHMEM_CMP_EQ, 1);
  }
  shmem_barrier_all();
  ok &= run_every_pe(area, &cfg, me);
  shmem_free(area);
  shmem_finalize();
  return ok ? 0 : 1;
}
