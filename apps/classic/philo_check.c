/* philo_check.c: the dining philosophers of the Regehr report's appendix (philo.c), with a
 * check of the result.
 *
 * Node i is a philosopher between fork i (its left) and fork (i+1) mod N (its right), each a
 * 32-bit shared variable at address 1024+fork. Picking up both forks is ONE isochron {read
 * left, read right, sched left, sched right}: atomically it takes the values and makes the
 * forks unsubstantiated, so a neighbour's later pick-up waits until this philosopher puts them
 * down with {assign left, assign right}. Every use adds 10 to a fork, so at the end each fork
 * must hold 20*REPS (two neighbours, REPS meals each); two neighbours holding a fork at once
 * would both have added 10 to the same value, and the fork would fall short.
 *
 *   isorun -n 4 -- classic-philo-check [reps]
 */
#include <iso/iso.h>
#include <stdio.h>
#include <stdlib.h>

#define REPS 1000

int main(int argc, char** argv) {
  int reps = argc > 1 ? atoi(argv[1]) : REPS;
  int i, left, right, ok = 1;
  long val1, val2;
  iso_var32* forks;

  if (reps <= 0) {
    fprintf(stderr, "usage: classic-philo-check [reps]\n");
    return 2;
  }
  iso_init(); /* on failure it says why on stderr and ends the process */
  if (NUMNODES < 2) {
    fprintf(stderr, "philo: needs 2 or more nodes (isorun -n 4 -- classic-philo-check)\n");
    iso_deinit();
    return 2;
  }
  forks = calloc((size_t)NUMNODES, sizeof(iso_var32));
  left = NODEID;
  right = (NODEID + 1) % NUMNODES;

  /* The classic lines, as they were. */
  /* clang-format off */
  if (NODEID == 0) { iso_start(); iso_write32(left+1024, NODEID*1000); iso_end(); }
  /* The classic relied on node 0 starting first; a barrier makes sure that the initial write
   * comes before every pick-up (else it could overwrite a fork between sched and assign). */
  iso_barrier();

  for (i = 0; i < reps; i++) {
    iso_start(); iso_read32(left+1024, &forks[left]); iso_read32(right+1024, &forks[right]);
    iso_sched(left+1024); iso_sched(right+1024); iso_end();
    val1 = read_iso_var(&forks[left]); val2 = read_iso_var(&forks[right]);
    iso_start(); iso_assign(left+1024, val1+10); iso_assign(right+1024, val2+10); iso_end();
  }
  /* clang-format on */

  iso_barrier(); /* every philosopher has put its forks down */
  if (NODEID == 0) {
    iso_start();
    for (i = 0; i < NUMNODES; i++) iso_read32(i + 1024, &forks[i]);
    iso_end();
    for (i = 0; i < NUMNODES; i++) {
      long val = read_iso_var(&forks[i]);
      if (val != 20L * reps) {
        printf("philo: fork %d holds %ld, expected %ld\n", i, val, 20L * reps);
        ok = 0;
      }
    }
    printf("philo: %d philosophers, %d meals each: every fork %s\n", NUMNODES, reps,
           ok ? "OK" : "WRONG");
  }
  free(forks);
  if (iso_deinit() != ISO_SUCCESS) {
    fprintf(stderr, "philo: %s\n", iso_last_error());
    return 1;
  }
  return ok ? 0 : 1;
}
