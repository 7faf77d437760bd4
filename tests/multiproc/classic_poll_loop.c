/* A classic polling loop (`while (1) iso_poll();`, as in the Regehr report's lat.c and
 * thru.c) on node 0, while node 1 exits with an isochron open, which cannot be a clean
 * leave: node 0 must not spin forever on a job that has failed, but end with a message
 * naming what happened. */
#include <iso/iso.h>

int main(void) {
  iso_init();
  iso_barrier(); /* node 0 is past iso_init */
  if (NODEID == 1) {
    iso_start();
    return 0; /* exits inside its isochron: it leaves as a failed node */
  }
  while (1) iso_poll();
}
