/* A classic polling loop (`while (1) iso_poll();`, as in the Regehr report's lat.c and
 * thru.c) on node 0, while node 1 leaves the job without iso_deinit: node 0 must not spin
 * forever on a job that has failed, but end with a message naming what happened. */
#include <iso/iso.h>

int main(void) {
  iso_init();
  iso_barrier();             /* node 0 is past iso_init */
  if (NODEID == 1) return 0; /* leaves without iso_deinit */
  while (1) iso_poll();
}
